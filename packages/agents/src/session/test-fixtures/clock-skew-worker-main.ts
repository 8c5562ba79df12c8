/**
 * Entry module of the skewed Worker processes of the session clock-skew
 * test: {@link clockSkewSessionFlows} on the PostgreSQL schema
 * PERDURE_PG_SCHEMA, with default Worker options. The parent skews its wall
 * clock (`startWorkerProcess({ wallClockSkewMs })`); it reports the skew it has.
 */
import { PostgresStore } from "@perdure/engine/postgres";
import { runWorkerProcessOnStore, testDatabaseUrl } from "@perdure/engine/testing";
import { clockSkewSessionFlows } from "./clock-skew-session-flows.ts";

const connectionString = testDatabaseUrl();
const schema = process.env["PERDURE_PG_SCHEMA"];
if (connectionString === undefined || schema === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_PG_SCHEMA");

const store = await PostgresStore.open({ connectionString, schema, migrate: false });
// The Worker's default liveness timeout (5 s), not the test helper's shorter one.
await runWorkerProcessOnStore(store, { flows: clockSkewSessionFlows, workerOptions: { livenessTimeoutMs: 5000 } });
console.log(`Date.now() - real = ${Math.round(Date.now() - (performance.timeOrigin + performance.now()))} ms`);
