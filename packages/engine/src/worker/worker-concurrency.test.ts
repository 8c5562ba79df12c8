import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { completeFlow, deadEnd, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store } from "../store/store.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

const url = testDatabaseUrl();

let running = 0;
let mostAtOnce = 0;
const Fan = defineStep<{ n: number }>("Fan", {
  execute: (_context, input) => moveToMany([...[0, 1, 2, 3].map((branch) => movement("Work", { n: input.n * 10 + branch })), movement("Ask", input)]),
});
// A Step whose ask runs while the others execute: asks take slots too.
const Ask = defineStep<{ n: number }>("Ask", {
  waitUntil: async () => {
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    await delay(5);
    running -= 1;
    return null;
  },
  execute: () => deadEnd(),
});
const Work = defineStep<{ n: number }>("Work", {
  execute: async (_context, input) => {
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    // Long enough for the Worker's claim loop to look for more work while this one runs.
    await delay(5);
    running -= 1;
    return input.n % 10 === 3 ? completeFlow() : deadEnd();
  },
});
const fanFlow = defineFlow({ type: "FanOut", start: "Fan", steps: [Fan, Work, Ask] });

/** Runs 12 Flows of four parallel Steps each on a Worker with `concurrency` slots; returns the most Steps that ran at once. */
async function mostStepsAtOnce(store: Store, concurrency: number): Promise<number> {
  running = 0;
  mostAtOnce = 0;
  const client = new Client({ store });
  const worker = new Worker({ store, flows: [fanFlow], concurrency });
  await worker.start();
  try {
    const ids = Array.from({ length: 12 }, (_, index) => `fan-${concurrency}-${index}`);
    for (const [index, id] of ids.entries()) await client.start(fanFlow, id, { n: index });
    for (const id of ids) assert.equal((await client.waitForFlow(id, { timeoutMs: 120_000 })).status, "completed");
  } finally {
    await worker.close();
  }
  return mostAtOnce;
}

// A commit hands the next Steps to its own Worker: their slots must count from the commit on, or the
// claim loop, woken by the same commit, fills them a second time.
void test("on SQLite a Worker never runs more Steps at once than its concurrency, across commits that hand it the next Steps", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  assert.equal(await mostStepsAtOnce(temporary.store, 1), 1);
  const most = await mostStepsAtOnce(temporary.store, 2);
  assert.ok(most <= 2, `${most} Steps ran at once on 2 slots`);
});

void test("on PostgreSQL a Worker never runs more Steps at once than its concurrency", { skip: postgresTestSkip(url) }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  assert.equal(await mostStepsAtOnce(store, 1), 1);
  const most = await mostStepsAtOnce(store, 2);
  assert.ok(most <= 2, `${most} Steps ran at once on 2 slots`);
});
