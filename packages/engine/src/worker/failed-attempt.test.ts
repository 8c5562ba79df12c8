import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import type { FailedAttempt } from "./failed-attempt.ts";
import { Worker } from "./worker.ts";

test("onAttemptFailed gets every failed attempt with the thrown error and its stack, and the retry still happens; its own throw goes to onError", async () => {
  const Flaky = defineStep("Flaky", {
    executeOptions: { retry: { initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 10, maximumAttempts: 3 } },
    execute: (context) => {
      if (context.attempt < 3) throw new TypeError(`flaky attempt ${context.attempt}`);
      return completeFlow();
    },
  });
  const flow = defineFlow({ type: "ReportedFailures", start: "Flaky", steps: [Flaky] });
  const temporary = createTemporarySqliteStore();
  const failures: FailedAttempt[] = [];
  const observerErrors: unknown[] = [];
  const worker = new Worker({
    store: temporary.store,
    flows: [flow],
    onAttemptFailed: (failure) => {
      failures.push(failure);
      if (failure.attempt === 2) throw new Error("the observer broke");
    },
    onError: (error) => observerErrors.push(error),
  });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    await client.start(flow, "f1");
    await client.waitForFlow("f1");
    assert.equal((await client.describe("f1")).status, "completed");
    assert.deepEqual(failures.map(({ flowId, flowType, stepType, method, attempt }) => ({ flowId, flowType, stepType, method, attempt })), [
      { flowId: "f1", flowType: "ReportedFailures", stepType: "Flaky", method: "execute", attempt: 1 },
      { flowId: "f1", flowType: "ReportedFailures", stepType: "Flaky", method: "execute", attempt: 2 },
    ]);
    const first = failures[0]?.error;
    assert.ok(first instanceof TypeError);
    assert.equal(first.message, "flaky attempt 1");
    assert.match(first.stack ?? "", /failed-attempt\.test\.ts/);
    assert.deepEqual(observerErrors.map((error) => (error as Error).message), ["the observer broke"]);
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});
