/**
 * The Flows whose Steps a Worker of this process is running, per store
 * object. A waiting Client of the same store leaves the Flow's Stream
 * wake-ups to that attempt's commit, which this process tells it about
 * (`local-commits.ts`), instead of reading on each of its Stream writes.
 */
import type { Store } from "../store/store.ts";

const running = new WeakMap<Store, Map<string, number>>();

/** Notes that an attempt of `flowId` runs in this process through `store`; returns the function that notes its end (once). */
export function noteLocalAttempt(store: Store, flowId: string): () => void {
  let byFlow = running.get(store);
  if (byFlow === undefined) {
    byFlow = new Map();
    running.set(store, byFlow);
  }
  const flows = byFlow;
  flows.set(flowId, (flows.get(flowId) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const count = (flows.get(flowId) ?? 1) - 1;
    if (count <= 0) flows.delete(flowId);
    else flows.set(flowId, count);
  };
}

/** Whether an attempt of `flowId` runs in this process through `store`. */
export function runsLocally(store: Store, flowId: string): boolean {
  return running.get(store)?.has(flowId) === true;
}
