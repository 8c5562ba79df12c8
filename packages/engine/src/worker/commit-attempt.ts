import { continuationPlace, FlowTransaction } from "../flow/flow-transaction.ts";
import { deliverLocalCommit, markCommitSend } from "../flow/local-commits.ts";
import { awaitsLocalFlowEnd, deliverLocalFlowEnd } from "../flow/local-flow-ends.ts";
import { failAttempt } from "./attempt-failure.ts";
import { storeConditions } from "../step/stored-conditions.ts";
import { durableBoundary } from "../internal/durable-boundary.ts";
import type { OneRequestOperations, StreamAppend } from "../store/step-commit.ts";
import { appendStreamBatch, appendStreamsInTransaction, wakeStreamReaders } from "../stream/stream-batch.ts";
import type { ExecutionLease, ExecutionRow, Store, StoreTransaction } from "../store/store.ts";
import { claimInTransaction, claimTasks, loadSelectedSnapshots, type ClaimBatch, type ClaimedAttempt } from "./claim-tasks.ts";
import type { AttemptOutcome, ClaimNext } from "./commit-attempt-types.ts";
import { claimedAttemptOf, decisionSummary, planOneRequestCommitFor } from "./one-request-commit.ts";

export type { AttemptOutcome, ClaimNext, PreparedDecision } from "./commit-attempt-types.ts";

/**
 * The execution as this attempt holds it, or undefined when the fence fails
 * (the lease lapsed, was taken over, or the execution was cancelled). While
 * the lease holds only heartbeats change the row (lease expiry, checkpoint),
 * so a store that can read just the lease saves reading the row again; a
 * failed attempt reads it whole, as its retry bookkeeping starts from it.
 */
async function fencedExecution(transaction: StoreTransaction, claim: ClaimedAttempt, workerId: string, whole: boolean): Promise<ExecutionRow | undefined> {
  const { execution } = claim;
  const holds = (lease: ExecutionLease | undefined): boolean => lease !== undefined && lease.claimedBy === workerId && lease.leaseToken === execution.leaseToken;
  if (!whole && transaction.readLease !== undefined) {
    const lease = await transaction.readLease(execution.flowId, execution.executionId);
    // A copy: the commit moves its status along, and a retried commit starts from the claimed row again.
    return holds(lease) ? { ...execution } : undefined;
  }
  const current = await transaction.getExecution(execution.flowId, execution.executionId);
  return holds(current) ? current : undefined;
}

/**
 * The one-request commit (see `store/step-commit.ts`); undefined when the
 * outcome needs the general path or the store answered `fallback`.
 */
async function commitInOneRequest(
  store: Store,
  oneRequest: OneRequestOperations,
  claim: ClaimedAttempt,
  workerId: string,
  outcome: AttemptOutcome,
  next: ClaimNext | undefined,
  now: number,
  streams: readonly StreamAppend[],
): Promise<{ claims: ClaimedAttempt[]; fenced: boolean } | undefined> {
  const planned = planOneRequestCommitFor(oneRequest, claim, workerId, outcome, next, now);
  if (planned === undefined) return undefined;
  const plan = streams.length === 0 ? planned : { ...planned, streams };
  const { execution } = claim;
  durableBoundary("worker.commit.before-commit", execution.flowId, execution.stepType);
  // Taken before the request goes out: a wait whose read returned before this mark was taken may trust the values.
  const sent = markCommitSend();
  const reply = await oneRequest.commitStep(plan);
  if (reply.outcome === "fallback") return undefined;
  if (reply.outcome === "committed") {
    durableBoundary("worker.commit.after-commit", execution.flowId, execution.stepType);
    // The plan writes each Attribute or instance once (an attempt stages one value per instance).
    if (plan.writes.length > 0) deliverLocalCommit(store, execution.flowId, plan.writes.map((write) => write.name), plan.writes, sent);
  }
  const claimed: ClaimedAttempt[] = [];
  for (const row of reply.claims) {
    const attempt = next === undefined ? undefined : claimedAttemptOf(next.flows, row, now);
    if (attempt !== undefined) claimed.push(attempt);
  }
  const claims = await loadSelectedSnapshots(store, workerId, claimed);
  if (next !== undefined && reply.claimStopped && claims.length < next.limit) {
    // A task the store could not claim alone (locks, loads, movement options) is next in line.
    const rest = await claimTasks(store, next.flows, workerId, next.limit - claims.length, { general: true });
    claims.push(...rest.claims);
    for (const changed of rest.changed) changed.announce(store);
  }
  // A wait with conditions or a publish queues a task only when a wait was matched, which the store tells.
  const queuedTask = plan.movements.length > 0 || plan.ready !== null || reply.readied === true;
  // A claim that took its whole limit may have left tasks, unless the store says it saw none left.
  const othersMayClaim = next === undefined || (claims.length >= next.limit && !(reply.claimedAll === true && !reply.claimStopped));
  if (reply.outcome === "committed" && queuedTask && othersMayClaim) store.wake({ kind: "tasks", at: now });
  const timerAt = plan.wait?.earliestTimerAt;
  if (reply.outcome === "committed" && timerAt !== undefined) store.wake({ kind: "timers", dueAt: timerAt });
  if (reply.outcome === "committed" && plan.finish !== null) {
    const { ended } = reply;
    if (ended !== undefined && awaitsLocalFlowEnd(store, execution.flowId)) {
      deliverLocalFlowEnd(store, { flowId: execution.flowId, flowType: execution.flowType, ...plan.finish, ...ended });
    }
    store.wake({ kind: "flow_finished", flowId: execution.flowId });
  }
  return { claims, fenced: reply.outcome === "fenced" };
}

/** The Stream messages an attempt's commit carries (see `commitAttempt`). */
export interface CommitStreams {
  /** The attempt's last messages, sorted as a batch is. */
  appends: readonly StreamAppend[];
  /** Write them alone when the commit is fenced. */
  afterFence: boolean;
}

const noStreams: CommitStreams = { appends: [], afterFence: false };


/**
 * Commits an attempt's outcome in one transaction, fenced by its lease token:
 * a result of an attempt that was cancelled or superseded is discarded. In
 * the same transaction it claims up to `next.limit` queued tasks, so a chain
 * of Steps costs one transaction per Step, and it appends the attempt's last
 * Stream messages (`streams`), so they cost no request of their own. A
 * fenced commit writes those alone afterwards (a Stream keeps a superseded
 * attempt's output). Returns the claims.
 */
export async function commitAttempt(
  store: Store,
  claim: ClaimedAttempt,
  workerId: string,
  outcome: AttemptOutcome,
  next?: ClaimNext,
  streams: CommitStreams = noStreams,
): Promise<ClaimedAttempt[]> {
  const { execution } = claim;
  const now = store.clock.now();
  const { appends } = streams;
  const oneRequest = store.oneRequest;
  // A one-request commit that cannot carry the messages leaves them to the general path, which can.
  if (oneRequest !== undefined && (appends.length === 0 || oneRequest.commitsStreams === true)) {
    const committed = await commitInOneRequest(store, oneRequest, claim, workerId, outcome, next, now, appends);
    if (committed !== undefined) {
      if (committed.fenced && streams.afterFence) await appendStreamBatch(store, appends);
      return committed.claims;
    }
  }
  let nextBatch: ClaimBatch = { claims: [], changed: [] };
  const flowTransaction = await store.transaction(async (transaction) => {
    const committed = await commitInTransaction(transaction);
    // After everything else the commit writes, as the one-request commits append them.
    if (committed !== undefined) await appendStreamsInTransaction(transaction, appends);
    if (next !== undefined) nextBatch = await claimInTransaction(transaction, next.flows, workerId, next.limit, now);
    durableBoundary("worker.commit.before-commit", execution.flowId, execution.stepType);
    return committed;
  });
  // A fenced commit changed nothing, so only a landed one is acknowledged.
  if (flowTransaction !== undefined) {
    durableBoundary("worker.commit.after-commit", execution.flowId, execution.stepType);
    wakeStreamReaders(store, appends);
  } else if (streams.afterFence) {
    await appendStreamBatch(store, appends);
  }
  // Everything claimable for this Worker's types was taken when it claimed fewer than it could, or when it
  // looked at every claimable task there was: the Flow's new tasks need no wake-up.
  const othersMayClaim = next === undefined || (nextBatch.claims.length >= next.limit && nextBatch.claimedAll !== true);
  flowTransaction?.announce(store, { tasks: othersMayClaim });
  for (const changed of nextBatch.changed) changed.announce(store);
  return nextBatch.claims;

  async function commitInTransaction(transaction: StoreTransaction): Promise<FlowTransaction | undefined> {
    const current = await fencedExecution(transaction, claim, workerId, outcome.kind === "error");
    if (current === undefined) return undefined;
    const flowTransaction = await FlowTransaction.open(transaction, claim.flow, execution.flowId, now);
    if (flowTransaction === undefined) return undefined;
    flowTransaction.continueChain(continuationPlace(current, claim.claimedAt, now));
    if (outcome.kind === "error") {
      await failAttempt(flowTransaction, current, outcome.error, claim.claimedAt);
      await flowTransaction.close();
      return flowTransaction;
    }
    for (const write of outcome.writes) await flowTransaction.writeAttribute(write.name, write.key, write.value);
    for (const publish of outcome.publishes) await flowTransaction.publish(publish.name, publish.key, publish.value ?? "null");
    const history = {
      executionId: current.executionId,
      stepType: current.stepType,
      method: claim.method,
      status: "completed" as const,
      attempt: current.attempt,
      startedAt: claim.claimedAt,
    };
    // Locks are taken at claim for the claimed method only, so a method without locks holds none.
    const holdsLocks = claim.methodOptions.lockNames.length > 0;
    if (outcome.kind === "wait_until") {
      if (holdsLocks) await transaction.releaseLocks(execution.flowId, execution.executionId);
      const stored = outcome.conditions === null ? null : storeConditions(current.stepType, outcome.conditions, now);
      await flowTransaction.recordHistory({ ...history, outcome: stored === null ? null : JSON.stringify(stored), error: null });
      // Queued at `now`, as the one-request commits queue a wait without conditions.
      if (stored === null) await flowTransaction.makeReady(current, { firedTimers: [], messages: [] }, { availableAt: now, scheduledAt: now });
      else await flowTransaction.startWaiting(current, stored);
    } else {
      const { decision } = outcome;
      await flowTransaction.cancelStepTypes(decision.cancelStepTypes, current.executionId);
      if (decision.kind === "move") for (const movement of decision.movements) await flowTransaction.schedule(movement);
      if (decision.kind === "complete") await flowTransaction.finish("completed", decision.output === undefined ? {} : { output: decision.output }, current.executionId);
      if (decision.kind === "fail") await flowTransaction.finish("failed", { error: decision.error ?? "failed" }, current.executionId);
      await flowTransaction.removeExecution(current, { holdsLocks });
      await flowTransaction.recordHistory({ ...history, outcome: decisionSummary(decision), error: null });
    }
    await flowTransaction.close();
    return flowTransaction;
  }
}
