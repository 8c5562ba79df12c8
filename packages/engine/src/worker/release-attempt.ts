/**
 * A closing Worker hands back the attempts still running at its drain
 * deadline, so another Worker takes them at once instead of after this
 * Worker's liveness lapses.
 */
import { FlowTransaction } from "../flow/flow-transaction.ts";
import type { Store } from "../store/store.ts";
import { failAttempt, type AttemptError } from "./attempt-failure.ts";
import type { ClaimedAttempt } from "./claim-tasks.ts";

/** The persisted error type of an attempt its closing Worker released. */
export const workerReleasedErrorType = "WorkerReleased";

/** Why a released attempt ended: a retryable failure that is queued again without backoff. */
export function workerReleasedError(claim: ClaimedAttempt, workerId: string, drainTimeoutMs: number): AttemptError {
  const { execution } = claim;
  return {
    type: workerReleasedErrorType,
    message: `Worker ${workerId} was closing and released attempt ${execution.attempt} of ${execution.stepType} still running after its drain timeout of ${drainTimeoutMs} ms; `
      + "its result, if any, is discarded",
    terminal: false,
    withoutBackoff: true,
  };
}

/**
 * Records the attempt as failed with `error` and queues its execution again
 * (or routes it, when that was its last attempt), fenced by the attempt's
 * lease: true when this released it, false when its own commit, a
 * cancellation or a takeover came first.
 */
export async function releaseAttempt(store: Store, claim: ClaimedAttempt, workerId: string, error: AttemptError): Promise<boolean> {
  const { execution } = claim;
  const now = store.clock.now();
  const released = await store.transaction(async (transaction) => {
    const current = await transaction.getExecution(execution.flowId, execution.executionId);
    if (current?.claimedBy !== workerId || current.leaseToken !== execution.leaseToken) return undefined;
    const flowTransaction = await FlowTransaction.open(transaction, claim.flow, execution.flowId, now);
    if (flowTransaction === undefined) return undefined;
    await failAttempt(flowTransaction, current, error, claim.claimedAt);
    await flowTransaction.close();
    return flowTransaction;
  });
  released?.announce(store);
  return released !== undefined;
}
