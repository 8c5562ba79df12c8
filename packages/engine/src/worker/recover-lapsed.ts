import type { FlowCore } from "../flow/flow.ts";
import { FlowTransaction } from "../flow/flow-transaction.ts";
import { failAttempt, routeFailure, type AttemptError } from "./attempt-failure.ts";
import type { ExecutionRow, Store } from "../store/store.ts";

function lapseError(row: ExecutionRow, now: number): AttemptError {
  if (row.deadlineAt !== null && row.deadlineAt <= now) {
    return { type: "StepTimeout", message: `attempt ${row.attempt} of ${row.stepType} ran past its method timeout`, terminal: false };
  }
  // The lease still ran, so the row was found because its Worker's liveness lapsed.
  if (row.leaseExpiresAt !== null && row.leaseExpiresAt <= now) {
    return { type: "HeartbeatTimeout", message: `attempt ${row.attempt} of ${row.stepType} sent no heartbeat within its heartbeat timeout`, terminal: false };
  }
  return { type: "WorkerLost", message: `Worker ${row.claimedBy ?? "unknown"} stopped while running attempt ${row.attempt} of ${row.stepType}`, terminal: false };
}

/**
 * Fails attempts whose lease lapsed (method timeout, heartbeat timeout, or a
 * Worker whose liveness lapsed) and executions whose retry window closed
 * before any attempt started. Any Worker hosting the Flow type may do this.
 */
export async function recoverLapsed(store: Store, flows: ReadonlyMap<string, FlowCore>): Promise<number> {
  const now = store.clock.now();
  const flowTypes = [...flows.keys()];
  const changed: FlowTransaction[] = [];
  await store.transaction(async (transaction) => {
    for (const row of await transaction.findLapsedLeases(flowTypes, now, 64)) {
      const flow = flows.get(row.flowType);
      const flowTransaction = flow === undefined ? undefined : await FlowTransaction.open(transaction, flow, row.flowId, now);
      if (flowTransaction === undefined) continue;
      await failAttempt(flowTransaction, row, lapseError(row, now), row.availableAt);
      await flowTransaction.close();
      changed.push(flowTransaction);
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
  return changed.length;
}
