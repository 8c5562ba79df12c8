/**
 * Entry module of a Worker process for the clock-skew test: the clock-test
 * Flow types on the PostgreSQL schema PERDURE_PG_SCHEMA, with the default
 * liveness timeout. Start it with `startWorkerProcess({ wallClockSkewMs })`
 * to skew its wall clock.
 */
import { runWorkerProcessOnStore } from "../../testing/worker-process.ts";
import { PostgresStore } from "../runtime/postgres-store.ts";
import { testDatabaseUrl } from "../temporary-postgres-schema.ts";
import { clockFlows } from "./clock-flows.ts";

const connectionString = testDatabaseUrl();
const schema = process.env["PERDURE_PG_SCHEMA"];
if (connectionString === undefined || schema === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_PG_SCHEMA");

const store = await PostgresStore.open({ connectionString, schema, poolSize: 4, pollIntervalMs: 200, migrate: false });
// The default liveness timeout (5 s): the test checks takeover after it, not after a shortened one.
await runWorkerProcessOnStore(store, { flows: clockFlows, workerOptions: { concurrency: 8, livenessTimeoutMs: 5000 } });
console.log(`clock skew ${process.env["PERDURE_TEST_CLOCK_SKEW_MS"] ?? "0"} ms, Date.now() - real = ${Math.round(Date.now() - (performance.timeOrigin + performance.now()))} ms`);
