import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute, attributeMap } from "../../attribute/attribute.ts";
import { RetryAfterError } from "../../errors/retry-after-error.ts";
import { TerminalError } from "../../errors/terminal-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc } from "../../rpc/rpc.ts";
import { completeFlow, deadEnd, moveTo } from "../../step/decision.ts";
import type { RecoveryError } from "../../step/recovery-error.ts";
import { defineStep } from "../../step/step.ts";
import { claimTasks } from "../../worker/claim-tasks.ts";
import { pollUntil } from "../poll-until.ts";
import { deferred, startEnvironment, waitForExecution, type StoreConformanceOptions } from "./harness.ts";

const recovered = attribute<RecoveryError & { input: unknown }>("Recovered");

const Recover = defineStep<unknown>("Recover", {
  execute: (context, input) => {
    const error = context.recoveryError;
    if (error === undefined) throw new Error("Recover ran without a recovery error");
    context.write(recovered, { ...error, input });
    return completeFlow();
  },
});

const fastRetry = { initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 10 };

export function attemptTests(options: StoreConformanceOptions): void {
  it("retries a failing method with its policy, then commits the successful attempt once", async () => {
    const attempts = attribute<number[]>("Attempts");
    const Flaky = defineStep("Flaky", {
      executeOptions: { retry: { ...fastRetry, maximumAttempts: 3 } },
      execute: (context) => {
        if (context.attempt < 3) throw new Error(`flaky attempt ${context.attempt}`);
        context.write(attempts, [context.attempt]);
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Retries", start: "Flaky", steps: [Flaky], persistence: { attempts } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "retry-1");
      await environment.waitForStatus("retry-1", "completed");
      assert.deepEqual(await environment.client.getAttributes("retry-1", attempts), [[3]]);
      const history = await environment.client.getStepHistory("retry-1");
      assert.deepEqual(history.map((entry) => [entry.status, entry.attempt]), [["failed", 1], ["failed", 2], ["completed", 3]]);
      assert.equal(history[0]?.error, "Error: flaky attempt 1");
    } finally {
      await environment.dispose();
    }
  });

  it("a RetryAfterError makes the next attempt wait at least its retryAfterMs, capped at the policy's longest interval", async () => {
    const RateLimited = defineStep("RateLimited", {
      executeOptions: { retry: { initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 400, maximumAttempts: 3 } },
      execute: (context) => {
        // The first asks for 300 ms; the second for an hour, which the policy caps at 400 ms.
        if (context.attempt === 1) throw new RetryAfterError("slow down", { retryAfterMs: 300 });
        if (context.attempt === 2) throw new RetryAfterError("slow down more", { retryAfterMs: 3_600_000 });
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "RetryAfter", start: "RateLimited", steps: [RateLimited] });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "retry-after-1");
      await environment.waitForStatus("retry-after-1", "completed", 10_000);
      const history = await environment.client.getStepHistory("retry-after-1");
      assert.deepEqual(history.map((entry) => [entry.status, entry.attempt]), [["failed", 1], ["failed", 2], ["completed", 3]]);
      const [first, second, third] = history;
      assert.ok(first !== undefined && second !== undefined && third !== undefined);
      assert.ok(second.startedAt.getTime() - first.finishedAt.getTime() >= 300, "the second attempt started before retry-after");
      assert.ok(third.startedAt.getTime() - second.finishedAt.getTime() >= 400, "the third attempt started before the capped wait");
      assert.equal(first.error, "RetryAfterError: slow down");
    } finally {
      await environment.dispose();
    }
  });

  it("without a failure route, exhausted retries fail the Flow with the last error", async () => {
    const Broken = defineStep("Broken", {
      executeOptions: { retry: { ...fastRetry, maximumAttempts: 2 } },
      execute: () => { throw new RangeError("quota exceeded"); },
    });
    const flow = defineFlow({ type: "Exhausted", start: "Broken", steps: [Broken] });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "exhausted-1");
      await environment.waitForStatus("exhausted-1", "failed");
      assert.equal((await environment.client.describe("exhausted-1")).error, "Step Broken failed: RangeError: quota exceeded");
    } finally {
      await environment.dispose();
    }
  });

  it("a failure route receives the failed Step's input and a NOT_COMPLETED recovery error; TerminalError skips retries", async () => {
    let runs = 0;
    const Charge = defineStep<{ orderId: string }>("Charge", {
      failureRoute: "Recover",
      executeOptions: { retry: { ...fastRetry, maximumAttempts: 5 } },
      execute: () => {
        runs += 1;
        throw new TerminalError("card declined");
      },
    });
    const flow = defineFlow({ type: "Routes", start: "Charge", steps: [Charge, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "route-1", { orderId: "o-7" });
      await environment.waitForStatus("route-1", "completed");
      const [error] = await environment.client.getAttributes("route-1", recovered);
      assert.deepEqual(error, { stepType: "Charge", type: "TerminalError", message: "card declined", attemptProgress: "NOT_COMPLETED", attempts: 1, input: { orderId: "o-7" } });
      assert.equal(runs, 1);
    } finally {
      await environment.dispose();
    }
  });

  it("a Step whose retry window closes before any Worker claims it routes with NOT_STARTED", async () => {
    const Late = defineStep("Late", {
      failureRoute: "Recover",
      executeOptions: { retry: { totalDurationMs: 150 } },
      execute: () => completeFlow("ran"),
    });
    const flow = defineFlow({ type: "NotStarted", start: "Late", steps: [Late, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "late-1");
      await new Promise((resolve) => setTimeout(resolve, 300));
      await environment.startWorker();
      await environment.waitForStatus("late-1", "completed");
      const [error] = await environment.client.getAttributes("late-1", recovered);
      assert.equal(error?.attemptProgress, "NOT_STARTED");
      assert.equal(error?.type, "RetryWindowClosed");
      assert.equal((await environment.client.describe("late-1")).output, null);
    } finally {
      await environment.dispose();
    }
  });

  it("a heartbeat checkpoint reaches the next attempt of the same execution", async () => {
    const seen = attribute<(string | null)[]>("Seen");
    const Resumable = defineStep("Resumable", {
      executeOptions: { retry: { ...fastRetry, maximumAttempts: 2 } },
      execute: async (context) => {
        if (context.attempt === 1) {
          await context.heartbeat("page-3");
          throw new Error("connection reset");
        }
        context.write(seen, [context.heartbeatCheckpoint ?? null]);
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Checkpoints", start: "Resumable", steps: [Resumable], persistence: { seen } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "checkpoint-1");
      await environment.waitForStatus("checkpoint-1", "completed");
      assert.deepEqual(await environment.client.getAttributes("checkpoint-1", seen), [["page-3"]]);
    } finally {
      await environment.dispose();
    }
  });

  it("a method timeout fails the attempt with StepTimeout and aborts its signal", async () => {
    let aborted = false;
    const Slow = defineStep("Slow", {
      failureRoute: "Recover",
      executeOptions: { timeoutMs: 100, retry: { maximumAttempts: 1 } },
      execute: async (context) => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        aborted = context.cancellationSignal.aborted;
        return completeFlow("too late");
      },
    });
    const flow = defineFlow({ type: "Timeouts", start: "Slow", steps: [Slow, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "timeout-1");
      await environment.waitForStatus("timeout-1", "completed");
      const [error] = await environment.client.getAttributes("timeout-1", recovered);
      assert.equal(error?.type, "StepTimeout");
      assert.equal(error?.attemptProgress, "NOT_COMPLETED");
      await pollUntil(() => aborted, { timeoutMs: 3000, description: "the slow handler to see its aborted signal" });
      assert.equal((await environment.client.describe("timeout-1")).output, null);
    } finally {
      await environment.dispose();
    }
  });

  it("a missing heartbeat fails the attempt with HeartbeatTimeout", async () => {
    const Silent = defineStep("Silent", {
      failureRoute: "Recover",
      executeOptions: { heartbeatTimeoutMs: 150, timeoutMs: 30_000, retry: { maximumAttempts: 1 } },
      execute: async (context) => {
        await new Promise((resolve) => { context.cancellationSignal.addEventListener("abort", resolve); setTimeout(resolve, 5000); });
        return completeFlow("should be discarded");
      },
    });
    const flow = defineFlow({ type: "Heartbeats", start: "Silent", steps: [Silent, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "heartbeat-1");
      await environment.waitForStatus("heartbeat-1", "completed");
      const [error] = await environment.client.getAttributes("heartbeat-1", recovered);
      assert.equal(error?.type, "HeartbeatTimeout");
    } finally {
      await environment.dispose();
    }
  });

  it("a Worker that runs an abandoned attempt and its successor tracks both: activeCount, close() and cancellation see the successor", async () => {
    const oldFinished = deferred();
    const releaseOld = deferred();
    const releaseNew = deferred();
    const successorStarted = deferred();
    let successorDone = false;
    const Stuck = defineStep("Stuck", {
      executeOptions: { heartbeatTimeoutMs: 150, timeoutMs: 30_000, retry: { ...fastRetry, maximumAttempts: 3 } },
      execute: async (context) => {
        if (context.attempt === 1) {
          // Ignores its abort, as a handler stuck in a library call would.
          await releaseOld.promise;
          oldFinished.resolve();
          return completeFlow("the abandoned attempt's late result");
        }
        successorStarted.resolve();
        await releaseNew.promise;
        successorDone = true;
        return completeFlow("the successor's result");
      },
    });
    const flow = defineFlow({ type: "Successor", start: "Stuck", steps: [Stuck] });
    const environment = await startEnvironment(options, [flow]);
    try {
      const worker = environment.worker;
      assert.ok(worker !== undefined);
      await environment.client.start(flow, "successor-1");
      await successorStarted.promise;
      assert.equal(worker.activeCount, 2, "the abandoned attempt and its successor");
      releaseOld.resolve();
      await oldFinished.promise;
      await pollUntil(() => worker.activeCount === 1, { description: "the abandoned attempt to leave" });
      const closing = worker.close();
      let isClosed = false;
      void closing.then(() => { isClosed = true; });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(isClosed, false, "close() returned while the successor still ran");
      releaseNew.resolve();
      await closing;
      assert.equal(successorDone, true);
      assert.equal((await environment.client.describe("successor-1")).output, "the successor's result");
    } finally {
      releaseOld.resolve();
      releaseNew.resolve();
      await environment.dispose();
    }
  });

  it("cancelling a running execution aborts its signal and discards its late result (fenced commit)", async () => {
    const written = attribute<string>("Written");
    const started = deferred();
    const release = deferred();
    let sawAbort = false;
    const Long = defineStep("Long", {
      execute: async (context) => {
        started.resolve();
        context.cancellationSignal.addEventListener("abort", () => { sawAbort = true; });
        await release.promise;
        context.write(written, "late result");
        return moveTo("Long");
      },
    });
    const flow = defineFlow({
      type: "Fencing",
      start: "Long",
      steps: [Long],
      persistence: { written },
      rpcs: { cancel: rpc({ name: "cancel", handler: (context) => { context.cancelSteps(["Long"]); return null; } }) },
    });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "fence-1");
      await started.promise;
      await waitForExecution(environment.client, "fence-1", "Long", "running");
      await environment.client.invokeRPC(flow.cancel, "fence-1");
      await pollUntil(() => sawAbort, { description: "the cancelled handler's signal to abort" });
      release.resolve();
      await pollUntil(async () => environment.worker?.activeCount === 0);
      assert.deepEqual(await environment.client.getAttributes("fence-1", written), [undefined]);
      assert.deepEqual((await environment.client.describe("fence-1")).executions, []);
    } finally {
      await environment.dispose();
    }
  });

  it("a decision naming an unknown Step fails the attempt with a clear error and no retry", async () => {
    const Lost = defineStep("Lost", { failureRoute: "Recover", execute: () => moveTo("Nowhere") });
    const flow = defineFlow({ type: "UnknownMoves", start: "Lost", steps: [Lost, Recover], persistence: { recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "unknown-1");
      await environment.waitForStatus("unknown-1", "completed");
      const [error] = await environment.client.getAttributes("unknown-1", recovered);
      assert.equal(error?.type, "UnknownStepError");
      assert.match(error?.message ?? "", /Flow UnknownMoves has no Step type Nowhere/);
      assert.equal(error?.attempts, 1);
    } finally {
      await environment.dispose();
    }
  });

  it("a dead Worker's attempt is reclaimed through its lapsed liveness, without waiting for the method timeout", async () => {
    const done = attribute<number>("Done");
    const Work = defineStep("Work", {
      executeOptions: { timeoutMs: 600_000, retry: { ...fastRetry, maximumAttempts: 3 } },
      execute: (context) => {
        context.write(done, context.attempt);
        return deadEnd();
      },
    });
    const flow = defineFlow({ type: "Liveness", start: "Work", steps: [Work], persistence: { done } });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "liveness-1");
      // A Worker that claims and then dies: it never commits and never writes liveness again.
      const ghost = await claimTasks(environment.store, new Map([[flow.flowType, flow]]), "ghost-worker", 1);
      assert.equal(ghost.claims.length, 1);
      await environment.startWorker();
      const [attempt] = await pollUntil(async () => {
        const found = await environment.client.getAttributes("liveness-1", done);
        return found[0] === undefined ? undefined : found;
      }, { timeoutMs: 10_000, description: "a live Worker to rerun the dead Worker's attempt" });
      assert.equal(attempt, 2);
      const history = await environment.client.getStepHistory("liveness-1");
      assert.match(history[0]?.error ?? "", /^WorkerLost: Worker ghost-worker stopped renewing its liveness while running attempt 1 of Work: it stopped, or lost the store for longer than its liveness timeout, so the attempt's commit could not be confirmed$/);
    } finally {
      await environment.dispose();
    }
  });

  it("a queued execution whose Step type was removed fails its Flow and never blocks the Worker", async () => {
    const Gone = defineStep("Gone", { execute: () => completeFlow("old") });
    const oldFlow = defineFlow({ type: "Evolving", start: "Gone", steps: [Gone] });
    const Current = defineStep("Current", { execute: () => completeFlow("new") });
    const newFlow = defineFlow({ type: "Evolving", start: "Current", steps: [Current] });
    const environment = await startEnvironment(options, [newFlow], false);
    try {
      await environment.client.start(oldFlow, "evolving-old");
      await environment.startWorker();
      await environment.client.start(newFlow, "evolving-new");
      await environment.waitForStatus("evolving-new", "completed");
      await environment.waitForStatus("evolving-old", "failed");
      assert.match((await environment.client.describe("evolving-old")).error ?? "", /Step Gone failed: UnknownStepError: Flow Evolving has no Step type Gone/);
    } finally {
      await environment.dispose();
    }
  });

  it("errors that cannot succeed on retry (an unloaded read) fail the attempt at once", async () => {
    let runs = 0;
    const orders = attributeMap<string>("Orders");
    const Careless = defineStep("Careless", {
      failureRoute: "Recover",
      executeOptions: { retry: { ...fastRetry, maximumAttempts: 5 } },
      execute: (context) => {
        runs += 1;
        context.read(orders.instance("never-loaded"));
        return completeFlow();
      },
    });
    const flow = defineFlow({ type: "Unloaded", start: "Careless", steps: [Careless, Recover], persistence: { orders, recovered } });
    const environment = await startEnvironment(options, [flow]);
    try {
      await environment.client.start(flow, "unloaded-1");
      await environment.waitForStatus("unloaded-1", "completed");
      const [error] = await environment.client.getAttributes("unloaded-1", recovered);
      assert.equal(error?.type, "UnloadedStateError");
      assert.equal(runs, 1);
    } finally {
      await environment.dispose();
    }
  });
}
