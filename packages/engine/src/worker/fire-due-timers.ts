import type { FlowCore } from "../flow/flow.ts";
import { FlowTransaction } from "../flow/flow-transaction.ts";
import type { StoredConditions } from "../step/stored-conditions.ts";
import type { Store, StoreTransaction, TimerRow } from "../store/store.ts";

/** Marks one timer fired and matches its execution's wait, inside a transaction. */
export async function fireTimer(transaction: StoreTransaction, flow: FlowCore, timer: TimerRow, now: number): Promise<FlowTransaction | undefined> {
  const flowTransaction = await FlowTransaction.open(transaction, flow, timer.flowId, now);
  if (flowTransaction === undefined) return undefined;
  await transaction.markTimerFired(timer.flowId, timer.executionId, timer.timerId, now);
  const execution = await transaction.getExecution(timer.flowId, timer.executionId);
  if (execution?.status === "waiting" && execution.conditions !== null) {
    await flowTransaction.tryCompleteWait(execution, JSON.parse(execution.conditions) as StoredConditions);
  }
  await flowTransaction.close();
  return flowTransaction;
}

/**
 * Fires the due timers of the hosted Flow types. Returns how many fired and
 * when the next unfired one falls due, so the caller can sleep until then.
 */
export async function fireDueTimers(store: Store, flows: ReadonlyMap<string, FlowCore>, limit: number): Promise<{ fired: number; nextDueAt: number | undefined }> {
  const now = store.clock.now();
  const flowTypes = [...flows.keys()];
  const changed: FlowTransaction[] = [];
  const result = await store.transaction(async (transaction) => {
    const due = await transaction.findDueTimers(flowTypes, now, limit);
    for (const timer of due) {
      const flow = flows.get(timer.flowType);
      if (flow === undefined) continue;
      const flowTransaction = await fireTimer(transaction, flow, timer, now);
      if (flowTransaction !== undefined) changed.push(flowTransaction);
    }
    return { fired: due.length, nextDueAt: await transaction.nextTimerDueAt(flowTypes) };
  });
  for (const flowTransaction of changed) flowTransaction.announce(store);
  return result;
}
