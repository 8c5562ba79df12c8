/**
 * A Worker whose store is closed under it (its owner closed the store
 * first) stops on its own: one error says so, and nothing keeps retrying
 * the closed store or keeps the process alive.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { defineFlow } from "../flow/flow.ts";
import { deadEnd } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { StoreClosedError } from "../errors/store-closed-error.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

const flow = defineFlow({ type: "Idle", start: "Idle", steps: [defineStep("Idle", { execute: () => deadEnd() })], persistence: {} });

void test("a Worker whose store was closed under it stops with one error naming the store, and close() returns", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const errors: unknown[] = [];
  const worker = new Worker({ store: temporary.store, flows: [flow], workerId: "orphan", livenessTimeoutMs: 1000, onError: (error) => errors.push(error) });
  await worker.start();
  await temporary.store.close();

  const [stopped] = await pollUntil(() => (errors.length > 0 ? errors : undefined), { description: "the Worker to notice its closed store" });
  assert.ok(StoreClosedError.isInstance(stopped));
  assert.match((stopped as Error).message, /^Worker orphan stopped: the SQLite store at .* is closed; close a Worker before its store$/);
  assert.deepEqual(await worker.close(), { released: 0 });
  // Several liveness ticks (200 ms each) later, nothing has asked the closed store again.
  await sleep(1000);
  assert.equal(errors.length, 1, `errors after the stop: ${errors.map((e) => (e as Error).stack).join("\n")}`);
});
