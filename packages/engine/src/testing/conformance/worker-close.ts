import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute } from "../../attribute/attribute.ts";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow } from "../../step/decision.ts";
import type { RecoveryError } from "../../step/recovery-error.ts";
import { defineStep } from "../../step/step.ts";
import { Worker } from "../../worker/worker.ts";
import { pollUntil } from "../poll-until.ts";
import { deferred, startEnvironment, type StoreConformanceOptions } from "./harness.ts";

/** A backoff far longer than any test waits: an attempt that runs again in time was queued without it. */
const slowRetry = { initialIntervalMs: 600_000, backoffCoefficient: 1, maximumIntervalMs: 600_000 };

export function workerCloseTests(options: StoreConformanceOptions): void {
  it("close with a drain timeout lets an attempt that finishes in time commit, and releases nothing", async () => {
    const gate = deferred();
    const started = deferred();
    const Slow = defineStep("Slow", {
      execute: async () => {
        started.resolve();
        await gate.promise;
        return completeFlow("done");
      },
    });
    const flow = defineFlow({ type: "DrainInTime", start: "Slow", steps: [Slow] });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "drain-1");
      await started.promise;
      const closing = environment.worker?.close({ drainTimeoutMs: 30_000 });
      gate.resolve();
      assert.deepEqual(await closing, { released: 0 });
      environment.worker = undefined;
      const description = await environment.client.describe("drain-1");
      assert.equal(description.status, "completed");
      assert.equal(description.output, "done");
    } finally {
      await environment.dispose();
    }
  });

  it("an attempt still running at the drain timeout is released as WorkerReleased and another Worker runs it again at once, without backoff", async () => {
    const results = attribute<string>("Result");
    const started = deferred();
    const firstGate = deferred();
    let firstSignal: AbortSignal | undefined;
    const Slow = defineStep("Slow", {
      executeOptions: { retry: { ...slowRetry, maximumAttempts: 3 }, timeoutMs: 600_000 },
      execute: async (context) => {
        if (context.attempt === 1) {
          firstSignal = context.cancellationSignal;
          started.resolve();
          // Ignores its signal on purpose: the release must not depend on the handler stopping.
          await firstGate.promise;
        }
        context.write(results, `attempt ${context.attempt}`);
        return completeFlow(`attempt ${context.attempt}`);
      },
    });
    const flow = defineFlow({ type: "DrainRelease", start: "Slow", steps: [Slow], persistence: { results } });
    const environment = await startEnvironment(options, [flow], { workerId: "closing-worker" });
    const otherStore = await environment.opened.reopen();
    const other = new Worker({ store: otherStore, flows: [flow], workerId: "taking-worker", livenessTimeoutMs: 1000, pollIntervalMs: 20, onError: () => undefined });
    try {
      await environment.client.start(flow, "release-1");
      await started.promise;
      await other.start();
      const closed = await environment.worker?.close({ drainTimeoutMs: 50 });
      environment.worker = undefined;
      assert.deepEqual(closed, { released: 1 });
      assert.equal(firstSignal?.aborted, true);
      await environment.waitForStatus("release-1", "completed", 20_000);
      // The released handler finishes now; its result must not land.
      firstGate.resolve();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const description = await environment.client.describe("release-1");
      assert.equal(description.output, "attempt 2");
      assert.deepEqual(await environment.client.getAttributes("release-1", results), ["attempt 2"]);
      const history = await environment.client.getStepHistory("release-1");
      assert.deepEqual(history.map((entry) => [entry.status, entry.attempt]), [["failed", 1], ["completed", 2]]);
      assert.match(history[0]?.error ?? "", /^WorkerReleased: Worker closing-worker was closing and released attempt 1 of Slow/);
    } finally {
      firstGate.resolve();
      await other.close();
      await otherStore.close();
      await environment.dispose();
    }
  });

  it("a released attempt counts as an attempt: with none left, the failure route gets WorkerReleased and NOT_COMPLETED", async () => {
    const recovered = attribute<RecoveryError>("Recovered");
    const started = deferred();
    const Write = defineStep("Write", {
      failureRoute: "Recover",
      executeOptions: { retry: { ...slowRetry, maximumAttempts: 1 } },
      execute: async (context) => {
        started.resolve();
        await new Promise((resolve) => context.cancellationSignal.addEventListener("abort", resolve));
        return completeFlow("too late");
      },
    });
    const Recover = defineStep("Recover", {
      execute: (context) => {
        if (context.recoveryError !== undefined) context.write(recovered, context.recoveryError);
        return completeFlow("recovered");
      },
    });
    const flow = defineFlow({ type: "DrainLastAttempt", start: "Write", steps: [Write, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "release-last-1");
      await started.promise;
      assert.deepEqual(await environment.worker?.close({ drainTimeoutMs: 0 }), { released: 1 });
      environment.worker = undefined;
      // Routed by the release itself: no Worker runs until the next line.
      const { executions } = await environment.client.describe("release-last-1");
      assert.deepEqual(executions.map((execution) => execution.stepType), ["Recover"]);
      await environment.startWorker();
      await environment.waitForStatus("release-last-1", "completed");
      const [error] = await environment.client.getAttributes("release-last-1", recovered);
      assert.equal(error?.type, "WorkerReleased");
      assert.equal(error?.attemptProgress, "NOT_COMPLETED");
      assert.equal(error?.attempts, 1);
    } finally {
      await environment.dispose();
    }
  });

  it("close refuses a negative or non-numeric drain timeout and keeps running", async () => {
    const Quick = defineStep("Quick", { execute: () => completeFlow("ok") });
    const flow = defineFlow({ type: "DrainOptions", start: "Quick", steps: [Quick] });
    const environment = await startEnvironment(options, [flow]);
    try {
      for (const drainTimeoutMs of [-1, Number.NaN, "25s" as unknown as number]) {
        await assert.rejects(environment.worker?.close({ drainTimeoutMs }) ?? Promise.resolve(), (error: unknown) => {
          assert.ok(InvalidInputError.isInstance(error));
          assert.match(error.message, /drainTimeoutMs/);
          return true;
        });
      }
      await environment.client.start(flow, "still-running-1");
      await environment.waitForStatus("still-running-1", "completed");
      await pollUntil(async () => (await environment.client.describe("still-running-1")).output === "ok", { description: "the output" });
    } finally {
      await environment.dispose();
    }
  });
}
