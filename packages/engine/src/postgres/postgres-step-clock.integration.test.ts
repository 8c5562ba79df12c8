/**
 * What a Step handler sees of time on a Worker whose wall clock is 10
 * minutes off, against a real PostgreSQL server: `context.now()` is the
 * database's clock (the clock stored times and Timers use), and
 * `context.deadline` is the attempt's deadline on the Worker's own wall
 * clock, so `deadline - Date.now()` is the real time left (a tool that sizes
 * its own timeout from it neither gives up at once nor waits 10 minutes
 * too long).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { startWorkerProcess } from "../testing/worker-process.ts";
import { clockReading, clockReadingFlow, realNow } from "./test-fixtures/clock-flows.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const workerMain = fileURLToPath(new URL("./test-fixtures/clock-worker-main.ts", import.meta.url));
const tenMinutesMs = 10 * 60_000;
/** The default method timeout, which the Step keeps. */
const methodTimeoutMs = 600_000;
/** Far below the skew: a claim, a commit and a database clock reading take well under this. */
const toleranceMs = 30_000;

for (const skewMs of [-tenMinutesMs, tenMinutesMs]) {
  void test(`a Step on a Worker whose wall clock is 10 minutes ${skewMs < 0 ? "slow" : "fast"} reads the database's clock from context.now() and its time left from context.deadline and Date.now()`, {
    timeout: 60_000,
    skip: postgresTestSkip(url),
  }, async (t) => {
    const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
    const store = await temporary.open();
    const worker = await startWorkerProcess({ entryModulePath: workerMain, env: { PERDURE_PG_SCHEMA: temporary.schema }, wallClockSkewMs: skewMs });
    t.after(async () => {
      await worker.kill();
      await temporary.dispose();
    });
    const client = new Client({ store });
    await client.start(clockReadingFlow, "reading");
    const reading = await pollUntil(async () => (await client.getAttributes("reading", clockReading))[0], { description: "the Step's clock reading" });
    // This process's wall clock is right, so the database's time agrees with the real time.
    assert.ok(Math.abs(reading.storeNow - reading.realAt) < toleranceMs, `context.now() was ${Math.round((reading.storeNow - reading.realAt) / 1000)} s off the real time`);
    assert.ok(Math.abs(store.clock.now() - realNow()) < toleranceMs, "the test's own reading of the database clock is off");
    assert.ok(reading.timeLeftMs <= methodTimeoutMs && reading.timeLeftMs > methodTimeoutMs - toleranceMs, `the Step computed ${Math.round(reading.timeLeftMs / 1000)} s left of its ${methodTimeoutMs / 1000} s timeout`);
    assert.equal(await worker.stop(), 0);
  });
}
