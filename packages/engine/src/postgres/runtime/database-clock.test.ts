import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client, defineFlow, defineStep, deadEnd, Worker } from "../../index.ts";
import { DatabaseClock, databaseClockResyncMs } from "./database-clock.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "../temporary-postgres-schema.ts";

const url = testDatabaseUrl();

function fakeMonotonic(): { now: () => number; advance: (ms: number) => void } {
  let at = 1000;
  return { now: () => at, advance: (ms) => { at += ms; } };
}

void test("the database clock carries the server's reading forward on the monotonic clock, from halfway through the round trip", () => {
  const monotonic = fakeMonotonic();
  const clock = new DatabaseClock(monotonic.now);
  assert.throws(() => clock.now(), /read no database time yet/);
  const sentAt = clock.startReading();
  monotonic.advance(10);
  clock.observe(1_700_000_000_000, sentAt);
  // The server read its clock about 5 ms before the reply arrived.
  assert.equal(clock.now(), 1_700_000_000_005);
  monotonic.advance(2500);
  assert.equal(clock.now(), 1_700_000_002_505);
});

void test("a reading with a round trip over a second does not replace a good one, and the clock asks again every few seconds", () => {
  const monotonic = fakeMonotonic();
  const clock = new DatabaseClock(monotonic.now);
  assert.equal(clock.isStale, true);
  clock.observe(5_000_000, clock.startReading());
  assert.equal(clock.isStale, false);
  monotonic.advance(databaseClockResyncMs - 1);
  assert.equal(clock.isStale, false);
  monotonic.advance(1);
  assert.equal(clock.isStale, true);
  const before = clock.now();
  const sentAt = clock.startReading();
  assert.equal(clock.isStale, false, "a reading in flight counts as fresh, so transactions do not all read at once");
  monotonic.advance(3000);
  clock.observe(99_000_000, sentAt);
  assert.equal(clock.now(), before + 3000);
  assert.throws(() => clock.observe(Number.NaN, clock.startReading()), /no usable time: NaN/);
});

void test("a PostgreSQL store in a process whose wall clock is 5 minutes fast stamps Flows and liveness with the database's time", {
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const temporary = createTemporaryPostgresSchema(url);
  t.after(() => temporary.dispose());
  const realDateNow = Date.now.bind(Date);
  t.mock.method(Date, "now", () => realDateNow() + 5 * 60_000);
  const store = await temporary.open();
  const databaseNow = async (): Promise<number> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const result = await client.query<{ now_ms: number }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms");
      return Number(result.rows[0]!.now_ms);
    } finally {
      await client.end();
    }
  };
  // Bounds, not timings: a loaded machine may take long between readings, but a clock that used
  // the process's wall time would be 5 minutes out of them. A reading's error is at most half a
  // round trip, and the clock keeps no reading whose round trip took over a second.
  const before = await databaseNow();
  const storeNow = store.clock.now();
  const reference = await databaseNow();
  assert.ok(storeNow >= before - 1000 && storeNow <= reference + 1000, `store clock ${storeNow} vs database ${before}..${reference}`);

  const flow = defineFlow({ type: "ClockStamp", start: "Idle", steps: [defineStep("Idle", { execute: () => deadEnd() })], persistence: {} });
  await new Client({ store }).start(flow, "stamped");
  const createdAt = (await new Client({ store }).describe("stamped")).createdAt.getTime();
  const afterStart = await databaseNow();
  assert.ok(createdAt >= reference - 1000 && createdAt <= afterStart + 1000, `createdAt ${createdAt} is outside the database's ${reference}..${afterStart}`);

  const worker = new Worker({ store, flows: [flow], workerId: "clock-worker", livenessTimeoutMs: 5000 });
  t.after(() => worker.close());
  await worker.start();
  const check = new pg.Client({ connectionString: url });
  await check.connect();
  try {
    const row = (await check.query<{ expires_at: string }>(`SELECT expires_at FROM ${pg.escapeIdentifier(temporary.schema)}.workers WHERE worker_id = 'clock-worker'`)).rows[0];
    const leftMs = Number(row?.expires_at) - await databaseNow();
    // Stamped with the process's clock it would expire about 305,000 ms from now; time spent on a loaded machine only shortens it.
    assert.ok(leftMs > -60_000 && leftMs <= 6000, `the liveness row expires ${leftMs} ms from the database's now, expected at most 5000`);
  } finally {
    await check.end();
  }
});
