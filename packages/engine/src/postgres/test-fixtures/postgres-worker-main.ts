/**
 * Entry module of a Worker process on the PostgreSQL store, for the
 * multi-process tests: hosts every crash-test Flow type on the schema named by
 * PERDURE_PG_SCHEMA of PERDURE_TEST_DATABASE_URL. On SIGTERM it drains and
 * exits 0; it exits when its parent dies.
 */
import { Worker } from "../../worker/worker.ts";
import { crashFlows } from "../../worker/crash-fixtures/flows.ts";
import { workerReadyLine } from "../../testing/worker-process.ts";
import { PostgresStore } from "../postgres-store.ts";
import { testDatabaseUrl } from "../temporary-postgres-schema.ts";

const connectionString = testDatabaseUrl();
const schema = process.env["PERDURE_PG_SCHEMA"];
if (connectionString === undefined || schema === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_PG_SCHEMA");

const store = await PostgresStore.open({ connectionString, schema, poolSize: 4, pollIntervalMs: 200, migrate: false });
const worker = new Worker({ store, flows: crashFlows, concurrency: Number(process.env["PERDURE_PG_CONCURRENCY"] ?? "16"), livenessTimeoutMs: 1500 });
let closing = false;
const shutDown = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  try {
    await worker.close();
    await store.close();
    process.exit(0);
  } catch (error) {
    console.error("perdure postgres test worker: close failed:", error);
    process.exit(1);
  }
};
process.on("SIGTERM", () => void shutDown());
process.on("SIGINT", () => void shutDown());
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(2);
}, 500).unref();
await worker.start();
console.log(`${workerReadyLine} ${worker.workerId}`);
