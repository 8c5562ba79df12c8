import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { Client, deadEnd, defineFlow, defineStep, Worker } from "../index.ts";
import { systemClock } from "../store/store-clock.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";

void test("the SQLite store keeps the local wall clock for every timestamp: Flows and liveness follow Date.now()", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  assert.equal(temporary.store.clock, systemClock);
  // Processes on one machine share one clock, even a wrong one: the store must follow it, not correct it.
  const realDateNow = Date.now.bind(Date);
  const offsetMs = 3_600_000;
  t.mock.method(Date, "now", () => realDateNow() + offsetMs);
  const flow = defineFlow({ type: "LocalClock", start: "Idle", steps: [defineStep("Idle", { execute: () => deadEnd() })], persistence: {} });
  const client = new Client({ store: temporary.store });
  const before = Date.now();
  await client.start(flow, "local");
  const createdAt = (await client.describe("local")).createdAt.getTime();
  assert.ok(createdAt >= before && createdAt <= Date.now(), `createdAt ${createdAt} is not on the local (moved) clock`);

  const worker = new Worker({ store: temporary.store, flows: [flow], workerId: "local-worker", livenessTimeoutMs: 5000 });
  await worker.start();
  const database = new DatabaseSync(temporary.path, { readOnly: true });
  try {
    const row = database.prepare("SELECT expires_at FROM workers WHERE worker_id = 'local-worker'").get() as { expires_at: number } | undefined;
    const leftMs = Number(row?.expires_at) - Date.now();
    assert.ok(leftMs > 3000 && leftMs <= 5000, `the liveness row expires ${leftMs} ms from the local clock, expected about 5000`);
  } finally {
    database.close();
  }
  await worker.close();
});
