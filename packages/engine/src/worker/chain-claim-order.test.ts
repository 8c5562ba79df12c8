import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { chainPlaceGraceMs, continuationPlace } from "../flow/flow-transaction.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { channel } from "../channel/channel.ts";
import { anyOf, received } from "../condition/condition.ts";
import { completeFlow, deadEnd, moveTo, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store } from "../store/store.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

const url = testDatabaseUrl();

test("a continuation keeps the place of the task that started its chain, until the chain has run longer than the grace", () => {
  // Queued afresh (a start, an RPC, a Timer): the chain starts running at its first claim.
  assert.deepEqual(continuationPlace({ availableAt: 1_000, scheduledAt: 1_000 }, 5_000, 5_010), { availableAt: 1_000, scheduledAt: 5_000 });
  // A continuation: same place, same start.
  assert.deepEqual(continuationPlace({ availableAt: 1_000, scheduledAt: 5_000 }, 9_000, 9_010), { availableAt: 1_000, scheduledAt: 5_000 });
  // Within the grace, however long the chain waited before it ran.
  assert.deepEqual(continuationPlace({ availableAt: 1_000, scheduledAt: 5_000 }, 5_000 + chainPlaceGraceMs - 10, 5_000 + chainPlaceGraceMs), { availableAt: 1_000, scheduledAt: 5_000 });
  // Past it, the next task queues at `now`, behind whatever waits, and starts a chain of its own.
  const late = 5_000 + chainPlaceGraceMs + 1;
  assert.deepEqual(continuationPlace({ availableAt: 1_000, scheduledAt: 5_000 }, late - 10, late), { availableAt: late, scheduledAt: late });
  // A retry is queued afresh at its backoff's end.
  assert.deepEqual(continuationPlace({ availableAt: 8_000, scheduledAt: 1_000 }, 8_005, 8_010), { availableAt: 8_000, scheduledAt: 8_005 });
});

const order: string[] = [];
const First = defineStep<{ name: string }>("First", { execute: (_context, input) => (order.push(`${input.name}.1`), moveTo("Second", input)) });
const Second = defineStep<{ name: string }>("Second", { execute: (_context, input) => (order.push(`${input.name}.2`), moveTo("Third", input)) });
const Third = defineStep<{ name: string }>("Third", { execute: (_context, input) => (order.push(`${input.name}.3`), completeFlow()) });
const chainFlow = defineFlow({ type: "QueuedChains", start: "First", steps: [First, Second, Third] });

// A chain through a wait: the second Step's publish completes the third's wait inside the chain.
const done = channel<number>("Done");
const Fork = defineStep<{ name: string }>("Fork", {
  execute: (_context, input) => (order.push(`${input.name}.1`), moveToMany([movement("Await", input), movement("Signal", input)])),
});
const Signal = defineStep<{ name: string }>("Signal", {
  execute: (context, input) => {
    order.push(`${input.name}.2`);
    context.publish(done, 1);
    return deadEnd();
  },
});
const Await = defineStep<{ name: string }>("Await", {
  waitUntil: () => anyOf(received(done, { exactly: 1 })),
  execute: (_context, input) => (order.push(`${input.name}.3`), completeFlow()),
});
const waitFlow = defineFlow({ type: "QueuedWaits", start: "Fork", steps: [Fork, Signal, Await], persistence: { done } });

/**
 * Queues `count` Flows of three Steps before any Worker runs, one at a time
 * so each has its own place, then drains them with one Worker slot. Returns
 * the order the Steps ran in.
 */
async function drainBacklog(store: Store, count: number, flow: typeof chainFlow = chainFlow): Promise<string[]> {
  order.length = 0;
  const client = new Client({ store });
  const names = Array.from({ length: count }, (_, index) => `${flow.flowType}-${String(index).padStart(2, "0")}`);
  for (const name of names) {
    await client.start(flow, name, { name });
    // The store's clock moves on, so the next start queues strictly later.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  // A long liveness timeout: on a loaded machine a lapse would retry an attempt, and a retry queues afresh.
  const worker = new Worker({ store, flows: [flow], concurrency: 1, livenessTimeoutMs: 60_000 });
  await worker.start();
  try {
    for (const name of names) assert.equal((await client.waitForFlow(name, { timeoutMs: 60_000 })).status, "completed");
  } finally {
    await worker.close();
  }
  return [...order];
}

function expectedOrder(count: number, flow: typeof chainFlow = chainFlow): string[] {
  return Array.from({ length: count }, (_, index) => `${flow.flowType}-${String(index).padStart(2, "0")}`).flatMap((name) => [`${name}.1`, `${name}.2`, `${name}.3`]);
}

void test("on SQLite a backlog drains chain by chain in the order the chains were queued: a started chain's Steps go before later chains' first Steps", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  assert.deepEqual(await drainBacklog(temporary.store, 12), expectedOrder(12));
  // Through a wait that a publish in the chain completes.
  assert.deepEqual(await drainBacklog(temporary.store, 8, waitFlow), expectedOrder(8, waitFlow));
});

void test("on PostgreSQL a backlog drains chain by chain in the order the chains were queued", { skip: postgresTestSkip(url) }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  assert.deepEqual(await drainBacklog(store, 12), expectedOrder(12));
  // Through a wait that a publish in the chain completes: matched by perdure_commit_step (migration 0011).
  assert.deepEqual(await drainBacklog(store, 8, waitFlow), expectedOrder(8, waitFlow));
});
