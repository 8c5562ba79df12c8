/**
 * Entry module of a Worker process on the PostgreSQL store, for the
 * multi-process tests: hosts every crash-test Flow type on the schema named by
 * PERDURE_PG_SCHEMA of PERDURE_TEST_DATABASE_URL. On SIGTERM it drains and
 * exits 0; it exits when its parent dies.
 */
import { crashFlows } from "../../worker/crash-fixtures/flows.ts";
import { runWorkerProcessOnStore } from "../../testing/worker-process.ts";
import { PostgresStore } from "../runtime/postgres-store.ts";
import { testDatabaseUrl } from "../temporary-postgres-schema.ts";

const connectionString = testDatabaseUrl();
const schema = process.env["PERDURE_PG_SCHEMA"];
if (connectionString === undefined || schema === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_PG_SCHEMA");

const store = await PostgresStore.open({ connectionString, schema, poolSize: 4, pollIntervalMs: 200, migrate: false });
await runWorkerProcessOnStore(store, {
  flows: crashFlows,
  workerOptions: { concurrency: Number(process.env["PERDURE_PG_CONCURRENCY"] ?? "16") },
});
