import { FlowTransaction, type EncodedMovement } from "../flow/flow-transaction.ts";
import { failAttempt, type AttemptError } from "../step/attempt-failure.ts";
import { storeConditions } from "../step/stored-conditions.ts";
import type { FlowCore } from "../flow/flow.ts";
import { durableBoundary } from "../internal/durable-boundary.ts";
import type { Store, StoreTransaction } from "../store/store.ts";
import type { Conditions } from "../timer/condition.ts";
import type { StagedWrite } from "./attempt-context.ts";
import { claimInTransaction, type ClaimBatch, type ClaimedAttempt } from "./claim-tasks.ts";

/** An `execute` decision with every value encoded, ready to commit. */
export interface PreparedDecision {
  kind: "move" | "dead_end" | "complete" | "fail";
  movements: EncodedMovement[];
  cancelStepTypes: readonly string[];
  output: string | undefined;
  error: string | undefined;
}

/** What an attempt produced. */
export type AttemptOutcome =
  | { kind: "wait_until"; conditions: Conditions | null; writes: readonly StagedWrite[]; publishes: readonly StagedWrite[] }
  | { kind: "execute"; decision: PreparedDecision; writes: readonly StagedWrite[]; publishes: readonly StagedWrite[] }
  | { kind: "error"; error: AttemptError };

function decisionSummary(decision: PreparedDecision): string {
  return JSON.stringify({
    kind: decision.kind,
    ...(decision.movements.length > 0 ? { moveTo: decision.movements.map((movement) => movement.stepType) } : {}),
    ...(decision.cancelStepTypes.length > 0 ? { cancel: decision.cancelStepTypes } : {}),
    ...(decision.error === undefined ? {} : { error: decision.error }),
  });
}

/** Which tasks the committing Worker takes next, in the same transaction. */
export interface ClaimNext {
  flows: ReadonlyMap<string, FlowCore>;
  /** Free slots, counting the one this attempt is about to free. */
  limit: number;
}

/**
 * Commits an attempt's outcome in one transaction, fenced by its lease token:
 * a result of an attempt that was cancelled or superseded is discarded. In
 * the same transaction it claims up to `next.limit` queued tasks, so a chain
 * of Steps costs one transaction per Step. Returns those claims.
 */
export async function commitAttempt(store: Store, claim: ClaimedAttempt, workerId: string, outcome: AttemptOutcome, next?: ClaimNext): Promise<ClaimedAttempt[]> {
  const { execution } = claim;
  const now = store.clock.now();
  let nextBatch: ClaimBatch = { claims: [], changed: [] };
  const flowTransaction = await store.transaction(async (transaction) => {
    const committed = await commitInTransaction(transaction);
    if (next !== undefined) nextBatch = await claimInTransaction(transaction, next.flows, workerId, next.limit, now);
    durableBoundary("worker.commit.before-commit", execution.flowId, execution.stepType);
    return committed;
  });
  // A fenced commit changed nothing, so only a landed one is acknowledged.
  if (flowTransaction !== undefined) durableBoundary("worker.commit.after-commit", execution.flowId, execution.stepType);
  // Everything claimable for this Worker's types was taken when it claimed fewer than it could,
  // so the Flow's new tasks need no wake-up.
  const othersMayClaim = next === undefined || nextBatch.claims.length >= next.limit;
  flowTransaction?.announce(store, { tasks: othersMayClaim });
  for (const changed of nextBatch.changed) changed.announce(store);
  return nextBatch.claims;

  async function commitInTransaction(transaction: StoreTransaction): Promise<FlowTransaction | undefined> {
    const current = await transaction.getExecution(execution.flowId, execution.executionId);
    if (current === undefined || current.claimedBy !== workerId || current.leaseToken !== execution.leaseToken) return undefined;
    const flowTransaction = await FlowTransaction.open(transaction, claim.flow, execution.flowId, now);
    if (flowTransaction === undefined) return undefined;
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
    if (outcome.kind === "wait_until") {
      await transaction.releaseLocks(execution.flowId, execution.executionId);
      const stored = outcome.conditions === null ? null : storeConditions(current.stepType, outcome.conditions, now);
      await flowTransaction.recordHistory({ ...history, outcome: stored === null ? null : JSON.stringify(stored), error: null });
      if (stored === null) await flowTransaction.makeReady(current, { firedTimers: [], messages: [] });
      else await flowTransaction.startWaiting(current, stored);
    } else {
      const { decision } = outcome;
      await flowTransaction.cancelStepTypes(decision.cancelStepTypes, current.executionId);
      if (decision.kind === "move") for (const movement of decision.movements) await flowTransaction.schedule(movement);
      if (decision.kind === "complete") await flowTransaction.finish("completed", decision.output === undefined ? {} : { output: decision.output }, current.executionId);
      if (decision.kind === "fail") await flowTransaction.finish("failed", { error: decision.error ?? "failed" }, current.executionId);
      await flowTransaction.removeExecution(current);
      await flowTransaction.recordHistory({ ...history, outcome: decisionSummary(decision), error: null });
    }
    await flowTransaction.close();
    return flowTransaction;
  }
}
