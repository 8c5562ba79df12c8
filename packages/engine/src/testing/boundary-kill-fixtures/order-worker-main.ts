/**
 * Entry module of the Worker processes of the engine's boundary-kill test:
 * stands by for its start signal (a replacement), then runs the order Flow
 * on the run's SQLite file with default Worker options and a stable Worker
 * ID, and drives its `release` RPC. See `orderEnvironmentVariables`.
 */
import { Client } from "../../client/client.ts";
import { SqliteStore } from "../../sqlite/sqlite-store.ts";
import { awaitBoundaryKillStartSignal } from "../boundary-kill-start-signal.ts";
import { runWorkerProcessOnStore } from "../worker-process.ts";
import { createOrderFlow, driveOrderRelease, orderEnvironmentVariables, orderFlowId, orderWorkerId } from "./order-flow.ts";

const storePath = process.env[orderEnvironmentVariables.storePath];
if (storePath === undefined || storePath === "") throw new Error(`set ${orderEnvironmentVariables.storePath} to the run's SQLite file`);
const flow = createOrderFlow({ chargeAttempts: Number(process.env[orderEnvironmentVariables.chargeAttempts] ?? "1") });

await awaitBoundaryKillStartSignal();
// Default store and Worker options (the test helper would shorten liveness to 1.5 s; 5 s is the Worker's default).
const store = SqliteStore.open({ path: storePath, durability: "process-crash-safe" });
if (process.env[orderEnvironmentVariables.generalPath] === "1") store.oneRequest = undefined;
const workerId = process.env[orderEnvironmentVariables.workerId] ?? orderWorkerId;
await runWorkerProcessOnStore(store, { flows: [flow], workerOptions: { workerId, livenessTimeoutMs: 5000 } });
void driveOrderRelease(new Client({ store }), flow, orderFlowId);
