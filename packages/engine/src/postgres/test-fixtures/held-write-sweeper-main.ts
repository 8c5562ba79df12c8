/**
 * A Worker process of the held-commit outage test: hosts the held write's
 * Flow on the cluster PERDURE_HELD_WRITE_URL with default Worker options, so
 * its liveness sweeps race the holder's commit.
 */
import { runWorkerProcessOnStore } from "../../testing/worker-process.ts";
import { PostgresStore } from "../runtime/postgres-store.ts";
import { heldWriteFlow } from "./held-write-flow.ts";

const connectionString = process.env["PERDURE_HELD_WRITE_URL"];
if (connectionString === undefined) throw new Error("set PERDURE_HELD_WRITE_URL");

// Store errors during the outage are expected; the test checks what the store holds afterwards.
const store = await PostgresStore.open({ connectionString, onError: () => undefined });
await runWorkerProcessOnStore(store, { flows: [heldWriteFlow], workerOptions: { livenessTimeoutMs: 5000, onError: () => undefined } });
