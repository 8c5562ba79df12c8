/**
 * The invariants checked after every simulation run, on the store's final
 * state and on what happened outside it (handler starts, acknowledged
 * writes). Each returns readable violations; none means the run held.
 */
import type { HistoryRow, Store } from "../../store/store.ts";
import type { AcknowledgedWrite } from "./simulated-process-store.ts";
import { commits, orderSteps, type HandlerEffect } from "./simulation-workload.ts";

/** What the checker reads of one order. */
export interface OrderState {
  flowId: string;
  status: string | undefined;
  committed: Map<string, number[]>;
  charged: boolean;
  history: HistoryRow[];
  attributes: Map<string, string>;
}

/** Reads every order's final state straight from the store. */
export async function readOrders(store: Store, flowIds: readonly string[]): Promise<OrderState[]> {
  return store.transaction(async (transaction) => {
    const states: OrderState[] = [];
    for (const flowId of flowIds) {
      const row = await transaction.lockFlow(flowId);
      const committed = new Map<string, number[]>();
      const attributes = new Map<string, string>();
      for (const name of [commits.name, "Notes"]) {
        for (const attribute of await transaction.readAttributeRange(flowId, name, {})) attributes.set(`${name}/${attribute.key}`, attribute.value);
      }
      for (const [key] of attributes) {
        const match = /^Commits\/(\w+)@(\d+)$/.exec(key);
        if (match === null) continue;
        committed.set(match[1]!, [...(committed.get(match[1]!) ?? []), Number(match[2])]);
      }
      const charged = (await transaction.readAttribute(flowId, "Charged", "")) === "true";
      const history = row === undefined ? [] : await transaction.listHistory(flowId, 10_000);
      states.push({ flowId, status: row?.status, committed, charged, history, attributes });
    }
    return states;
  });
}

/** Safety: what must hold whatever faults struck and wherever the run stopped. */
export function checkSafety(orders: readonly OrderState[], effects: readonly HandlerEffect[], acknowledged: readonly AcknowledgedWrite[], startedFlowIds: ReadonlySet<string>): string[] {
  const violations: string[] = [];
  const byFlow = new Map(orders.map((order) => [order.flowId, order]));
  for (const flowId of startedFlowIds) {
    if (byFlow.get(flowId)?.status === undefined) violations.push(`${flowId}: its start was acknowledged, but the Flow does not exist`);
  }
  for (const order of orders) {
    const { flowId } = order;
    const chargeStarts = effects.filter((effect) => effect.flowId === flowId && effect.step === "Charge" && effect.event === "start");
    if (chargeStarts.length > 1) {
      violations.push(`${flowId}: the single-attempt Step Charge ran ${chargeStarts.length} times (${chargeStarts.map((effect) => `${effect.process} attempt ${effect.attempt}`).join(", ")})`);
    }
    for (const step of orderSteps) {
      const attempts = order.committed.get(step) ?? [];
      if (attempts.length > 1) violations.push(`${flowId}: ${step} committed ${attempts.length} attempts (${attempts.join(", ")}): a stale or repeated commit was accepted`);
      const completed = order.history.filter((entry) => entry.stepType === step && entry.method === "execute" && entry.status === "completed");
      if (completed.length > 1) violations.push(`${flowId}: ${step} has ${completed.length} completed execute entries in its history`);
      if (completed.length === 1 && attempts.length === 1 && completed[0]!.attempt !== attempts[0]) {
        violations.push(`${flowId}: ${step} committed the writes of attempt ${attempts[0]!} but its history completed attempt ${completed[0]!.attempt}`);
      }
      if ((completed.length === 1) !== (attempts.length >= 1)) {
        violations.push(`${flowId}: ${step} has ${attempts.length} committed attempts and ${completed.length} completed history entries`);
      }
    }
    if (order.committed.has("Charge") && order.committed.has("ChargeRecover")) violations.push(`${flowId}: both charged and recovered`);
    if (order.charged !== order.committed.has("Charge")) violations.push(`${flowId}: Charged is ${String(order.charged)} but Charge committed ${String(order.committed.has("Charge"))}`);
    const attemptSuccess = effects.filter((effect) => effect.flowId === flowId && effect.step === "Charge" && effect.event === "end");
    if (order.committed.has("Charge") && attemptSuccess.length === 0) violations.push(`${flowId}: Charge committed without its handler finishing`);
    if (order.status === "completed") {
      for (const step of ["Reserve", "Nap", "Ship"]) if (!order.committed.has(step)) violations.push(`${flowId}: completed without committing ${step}`);
      if (!order.committed.has("Charge") && !order.committed.has("ChargeRecover")) violations.push(`${flowId}: completed without Charge or ChargeRecover`);
    }
    violations.push(...checkHistory(order));
  }
  for (const write of acknowledged) {
    const order = byFlow.get(write.flowId);
    const stored = order?.attributes.get(`${write.name}/${write.key}`);
    if (stored !== (write.value ?? undefined)) {
      violations.push(`${write.flowId}: ${write.process} saw its write of ${write.name}[${write.key}] = ${String(write.value)} committed, but the store holds ${String(stored)}`);
    }
  }
  return violations;
}

/** History: sequence numbers increase; per execution and method, attempts increase and at most one completes, last. */
function checkHistory(order: OrderState): string[] {
  const violations: string[] = [];
  let lastSeq = -Infinity;
  const byMethod = new Map<string, HistoryRow[]>();
  for (const entry of order.history) {
    if (entry.seq <= lastSeq) violations.push(`${order.flowId}: history entry ${entry.seq} follows ${lastSeq}`);
    lastSeq = entry.seq;
    const key = `${entry.executionId}/${entry.method}`;
    byMethod.set(key, [...(byMethod.get(key) ?? []), entry]);
  }
  for (const [key, entries] of byMethod) {
    for (let index = 1; index < entries.length; index++) {
      if (entries[index]!.attempt <= entries[index - 1]!.attempt) {
        violations.push(`${order.flowId}: ${key} recorded attempt ${entries[index]!.attempt} after attempt ${entries[index - 1]!.attempt}`);
      }
    }
    const completedAt = entries.findIndex((entry) => entry.status === "completed");
    if (completedAt !== -1 && completedAt !== entries.length - 1) violations.push(`${order.flowId}: ${key} recorded entries after it completed`);
  }
  return violations;
}

/** Liveness: once faults stopped, every Flow finished. */
export function checkLiveness(orders: readonly OrderState[], plannedFlowIds: readonly string[]): string[] {
  const byFlow = new Map(orders.map((order) => [order.flowId, order]));
  return plannedFlowIds
    .filter((flowId) => byFlow.get(flowId)?.status !== "completed" && byFlow.get(flowId)?.status !== "failed")
    .map((flowId) => `${flowId}: still ${byFlow.get(flowId)?.status ?? "not started"} at the end of the liveness bound`);
}
