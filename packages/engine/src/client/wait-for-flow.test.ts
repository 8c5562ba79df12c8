import assert from "node:assert/strict";
import { test } from "node:test";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store } from "../store/store.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";

/** Longer than any test here runs: a wait that ends early was woken by the Flow's end, not by polling. */
const noPolling = 600_000;

/** A one-Step Flow whose Step holds until `release`. */
function heldFlow() {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const flow = defineFlow({
    type: "Held",
    start: "Hold",
    steps: [defineStep("Hold", {
      execute: async (context) => {
        await held;
        return completeFlow({ finished: context.flowId });
      },
    })],
  });
  return { flow, release: () => release() };
}

async function checkWaits(t: test.TestContext, workerStore: Store, waitingStore: Store): Promise<void> {
  const { flow, release } = heldFlow();
  const worker = new Worker({ store: workerStore, flows: [flow] });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store: workerStore });
  const waiting = new Client({ store: waitingStore });
  await client.start(flow, "held-1", {});

  // A running Flow is described as running once the wait times out or is aborted.
  assert.equal((await waiting.waitForFlow("held-1", { timeoutMs: 0 })).status, "running");
  assert.equal((await waiting.waitForFlow("held-1", { timeoutMs: 50 })).status, "running");
  const aborted = new AbortController();
  const abortedWait = waiting.waitForFlow("held-1", { timeoutMs: noPolling / 2, signal: aborted.signal });
  aborted.abort();
  assert.equal((await abortedWait).status, "running");

  // The end wakes the wait: the store polls far less often than the wait's timeout.
  const completed = waiting.waitForFlow("held-1", { timeoutMs: noPolling / 2 });
  release();
  const description = await completed;
  assert.equal(description.status, "completed");
  assert.deepEqual(description.output, { finished: "held-1" });
  assert.equal((await waiting.waitForFlow("held-1")).status, "completed", "an ended Flow is described at once");

  // A stop ends the wait too.
  await client.start(defineFlow({ type: "Idle", start: "Never", steps: [defineStep("Never", { execute: () => completeFlow() })] }), "idle-1", {});
  const stopped = waiting.waitForFlow("idle-1", { timeoutMs: noPolling / 2 });
  await client.stop("idle-1", "no longer needed");
  assert.deepEqual(await stopped.then((ended) => [ended.status, ended.error]), ["stopped", "no longer needed"]);

  await assert.rejects(waiting.waitForFlow("held-1", { timeoutMs: -1 }), { name: "InvalidInputError", message: /waitForFlow timeoutMs -1 is invalid/ });
  await assert.rejects(waiting.waitForFlow("no-such-flow", { timeoutMs: 0 }), { name: "FlowNotFoundError" });
  await worker.close();
}

void test("waitForFlow on SQLite: describes a running Flow after its timeout or an abort, and returns as soon as the Flow completes or is stopped", async (t) => {
  const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
  t.after(() => temporary.dispose());
  await checkWaits(t, temporary.store, temporary.store);
});

void test("waitForFlow on PostgreSQL from another store: the end reaches the waiting process through NOTIFY", { skip: postgresTestSkip(testDatabaseUrl()) }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const workerStore = await temporary.open();
  const waitingStore = await temporary.open({ pollIntervalMs: noPolling });
  await checkWaits(t, workerStore, waitingStore);
});
