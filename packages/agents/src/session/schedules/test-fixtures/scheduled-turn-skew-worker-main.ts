/**
 * Entry module of the skewed Worker processes of the scheduled-turn clock
 * test: {@link scheduledTurnFlow} on the PostgreSQL schema PERDURE_PG_SCHEMA.
 * The parent skews its wall clock; it reports the skew it has.
 */
import { PostgresStore } from "@perdure/engine/postgres";
import { runWorkerProcessOnStore, testDatabaseUrl } from "@perdure/engine/testing";
import { scheduledTurnFlow } from "./scheduled-turn-flows.ts";

const connectionString = testDatabaseUrl();
const schema = process.env["PERDURE_PG_SCHEMA"];
if (connectionString === undefined || schema === undefined) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_PG_SCHEMA");

const store = await PostgresStore.open({ connectionString, schema, migrate: false });
await runWorkerProcessOnStore(store, { flows: [scheduledTurnFlow], workerOptions: { livenessTimeoutMs: 5000 } });
console.log(`Date.now() - real = ${Math.round(Date.now() - (performance.timeOrigin + performance.now()))} ms`);
