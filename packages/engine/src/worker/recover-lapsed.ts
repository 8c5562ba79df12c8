import type { FlowCore } from "../flow/flow.ts";
import { claimableSince, FlowTransaction } from "../flow/flow-transaction.ts";
import { failAttempt, routeFailure, tryResolveExecutionOptions, type AttemptError } from "./attempt-failure.ts";
import { leaseTakenAt } from "./claim-tasks.ts";
import type { ExecutionRow, Store } from "../store/store.ts";

/** When a lapsed attempt was claimed (see `leaseTakenAt`); when its Step's options no longer resolve, when it became claimable. */
function claimedAtOf(flowTransaction: FlowTransaction, row: ExecutionRow): number {
  const options = tryResolveExecutionOptions(flowTransaction, row);
  if (options === undefined) return claimableSince(row);
  return leaseTakenAt(row, row.status === "asking" ? options.waitUntil : options.execute, claimableSince(row));
}

function lapseError(row: ExecutionRow, now: number): AttemptError {
  if (row.deadlineAt !== null && row.deadlineAt <= now) {
    return { type: "StepTimeout", message: `attempt ${row.attempt} of ${row.stepType} ran past its method timeout`, terminal: false };
  }
  // The lease still ran, so the row was found because its Worker's liveness lapsed.
  if (row.leaseExpiresAt !== null && row.leaseExpiresAt <= now) {
    return { type: "HeartbeatTimeout", message: `attempt ${row.attempt} of ${row.stepType} sent no heartbeat within its heartbeat timeout`, terminal: false };
  }
  // Say only what the store shows: the Worker may have died, or be alive but cut off from the store,
  // holding a result it could not commit.
  return {
    type: "WorkerLost",
    message: `Worker ${row.claimedBy ?? "unknown"} stopped renewing its liveness while running attempt ${row.attempt} of ${row.stepType}: `
      + "it stopped, or lost the store for longer than its liveness timeout, so the attempt's commit could not be confirmed",
    terminal: false,
  };
}

/** How a live Worker's sweep judges lapsed leases; without it, every lapse is failed (a Worker's start). */
export interface LapseJudgement {
  /** The sweeping Worker, alive by definition: a lapsed liveness row of its own is not a lost Worker. */
  liveWorkerId: string;
  /**
   * False while the sweeping Worker may itself have just lost the store (see
   * `StoreContact`): lapsed liveness and heartbeats, which an outage causes
   * for every Worker, are left for later; method timeouts are not.
   */
  judgesLiveness: boolean;
}

/** True when a live sweeper must leave this lapse alone for now. */
function isLeftAlone(error: AttemptError, row: ExecutionRow, judgement: LapseJudgement | undefined): boolean {
  if (judgement === undefined || error.type === "StepTimeout") return false;
  if (!judgement.judgesLiveness) return true;
  return error.type === "WorkerLost" && row.claimedBy === judgement.liveWorkerId;
}

/**
 * Fails attempts whose lease lapsed (method timeout, heartbeat timeout, or a
 * Worker whose liveness lapsed) and executions whose retry window closed
 * before any attempt started. Any Worker hosting the Flow type may do this.
 */
export async function recoverLapsed(
  store: Store,
  flows: ReadonlyMap<string, FlowCore>,
  judgement?: LapseJudgement,
  onTakenOver?: (row: ExecutionRow, errorType: string) => void,
): Promise<number> {
  const takenOver: Array<[ExecutionRow, string]> = [];
  const now = store.clock.now();
  const flowTypes = [...flows.keys()];
  const changed: FlowTransaction[] = [];
  await store.transaction(async (transaction) => {
    for (const row of await transaction.findLapsedLeases(flowTypes, now, 64)) {
      const error = lapseError(row, now);
      if (isLeftAlone(error, row, judgement)) continue;
      const flow = flows.get(row.flowType);
      const flowTransaction = flow === undefined ? undefined : await FlowTransaction.open(transaction, flow, row.flowId, now);
      if (flowTransaction === undefined) continue;
      await failAttempt(flowTransaction, row, error, claimedAtOf(flowTransaction, row));
      await flowTransaction.close();
      changed.push(flowTransaction);
      takenOver.push([row, error.type]);
    }
    for (const row of await transaction.findExpiredQueued(flowTypes, now, 64)) {
      const flow = flows.get(row.flowType);
      const flowTransaction = flow === undefined ? undefined : await FlowTransaction.open(transaction, flow, row.flowId, now);
      if (flowTransaction === undefined) continue;
      const error = { type: "RetryWindowClosed", message: `${row.stepType} found no attempt slot within its retry window`, terminal: true };
      await routeFailure(flowTransaction, row, error);
      await flowTransaction.close();
      changed.push(flowTransaction);
    }
  });
  for (const flowTransaction of changed) flowTransaction.announce(store);
  for (const [row, errorType] of takenOver) onTakenOver?.(row, errorType);
  return changed.length;
}
