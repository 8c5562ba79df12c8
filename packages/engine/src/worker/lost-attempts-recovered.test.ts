/**
 * A Worker checking the attempts it started (its claims went in doubt)
 * recognises an attempt's end by its history entry's attempt number and
 * `startedAt`, the claim's time. An attempt whose lease lapsed (its Worker
 * paused past its liveness) and that recovery failed, then retried and
 * completed elsewhere, was reported as "the store went back in time ... it
 * ran a second time": recovery recorded `startedAt` as the time the
 * execution became claimable. It now records the lease's own time (see
 * `leaseTakenAt`). Found by the review (rev1) in simulation seeds 37, 45, 60
 * and more, which now count such reports as violations.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { claimTasks } from "./claim-tasks.ts";
import { findLostAttempts, inputKeyOf, type LostAttempt } from "./lost-attempts.ts";
import { recoverLapsed } from "./recover-lapsed.ts";
import { Worker } from "./worker.ts";
import { pollUntil } from "../testing/poll-until.ts";

const flow = defineFlow({
  type: "RecoveredAttempt",
  start: "Only",
  steps: [defineStep("Only", { execute: () => completeFlow({}), executeOptions: { retry: { maximumAttempts: 3, initialIntervalMs: 1 } } })],
});
const flows = new Map([[flow.flowType, flow]]);

void test("an attempt failed by lapse recovery and completed by a retry is not reported as lost by the store", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const store = temporary.store;
  await new Client({ store }).start(flow, "f1", {});
  // Let the clock move past the time the execution became claimable.
  await new Promise((resolve) => setTimeout(resolve, 20));

  // Worker "paused" claims attempt 1 (it has no liveness row: as if it paused past its liveness timeout).
  const batch = await claimTasks(store, flows, "paused", 1);
  const claim = batch.claims[0]!;
  const { flowId, executionId, seq, stepType, attempt, executeClaims } = claim.execution;
  const started = { flowId, flowType: flow.flowType, executionId, seq, stepType, attempt, executeClaims, claimedAt: claim.claimedAt, singleAttempt: false, inputKey: inputKeyOf(claim.execution.input) };

  // Another Worker's sweep fails it (WorkerLost), then runs attempt 2 to completion.
  assert.equal(await recoverLapsed(store, flows), 1);
  const other = new Worker({ store, flows: [flow], workerId: "other" });
  await other.start();
  await pollUntil(async () => (await store.transaction((transaction) => transaction.lockFlow(flowId)))?.status === "completed", { timeoutMs: 10_000, description: "the retry to complete the Flow" });
  await other.close();
  const history = await store.transaction((transaction) => transaction.listHistory(flowId, 10));
  t.diagnostic(`history: ${JSON.stringify(history.map((entry) => ({ attempt: entry.attempt, status: entry.status, startedAt: entry.startedAt })))}; claimedAt ${claim.claimedAt}`);

  // The paused Worker resumes, its claims are in doubt, and it checks what it started.
  const reports: LostAttempt[] = [];
  await findLostAttempts(store, flows, [started], { workerId: "paused", unknownWithin: undefined }, (lost) => reports.push(lost));
  assert.deepEqual(reports.map((lost) => lost.action), [], "the store lost nothing, but the check reports the attempt as lost");
});
