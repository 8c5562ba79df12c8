/**
 * A Flow's end, handed in this process from the Worker whose commit ended it
 * to the `client.waitForFlow` calls on the same store object, so that they
 * need not read the Flow again. Only a commit that knows every stored field
 * of the ended Flow hands it over (the PostgreSQL one-request commit returns
 * the ones it did not send); the others leave waiters to the `flow_finished`
 * wake event and a read.
 */
import type { Store } from "../store/store.ts";
import type { FlowStatus } from "../store/flow-status.ts";
import { LocalFlowListeners } from "./local-listeners.ts";

/** An ended Flow's stored fields, as they were committed. */
export interface EndedFlow {
  flowId: string;
  flowType: string;
  status: Exclude<FlowStatus, "running">;
  input: string;
  output: string | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

const listeners = new LocalFlowListeners<EndedFlow>();

/** Calls `listener` when a commit in this process ends `flowId` through `store`; returns the function that stops listening. */
export function onLocalFlowEnd(store: Store, flowId: string, listener: (ended: EndedFlow) => void): () => void {
  return listeners.listen(store, flowId, listener);
}

/** Whether anyone in this process waits for `flowId` to end; a committing Worker builds the ended Flow only then. */
export function awaitsLocalFlowEnd(store: Store, flowId: string): boolean {
  return listeners.has(store, flowId);
}

/** Hands a committed end to this process's waiters. */
export function deliverLocalFlowEnd(store: Store, ended: EndedFlow): void {
  listeners.deliver(store, ended.flowId, ended);
}
