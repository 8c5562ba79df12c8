/**
 * Listeners of this process keyed by store object and Flow ID: what
 * `local-commits.ts` and `local-flow-ends.ts` hand from a committing Worker
 * to the waiting Clients of the same store.
 */
import type { Store } from "../store/store.ts";

/** Listeners of one kind, per store object and Flow. */
export class LocalFlowListeners<TArgument> {
  private readonly byStore = new WeakMap<Store, Map<string, Set<(argument: TArgument) => void>>>();

  /** Calls `listener` on each delivery for `flowId` through `store`; returns the function that stops listening. */
  listen(store: Store, flowId: string, listener: (argument: TArgument) => void): () => void {
    let byFlow = this.byStore.get(store);
    if (byFlow === undefined) {
      byFlow = new Map();
      this.byStore.set(store, byFlow);
    }
    let listeners = byFlow.get(flowId);
    if (listeners === undefined) {
      listeners = new Set();
      byFlow.set(flowId, listeners);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && byFlow.get(flowId) === listeners) byFlow.delete(flowId);
    };
  }

  /** Whether anyone listens for `flowId` through `store`. */
  has(store: Store, flowId: string): boolean {
    return this.byStore.get(store)?.has(flowId) === true;
  }

  /** Calls the listeners of `flowId`; costs a map lookup when nobody listens. */
  deliver(store: Store, flowId: string, argument: TArgument): void {
    const listeners = this.byStore.get(store)?.get(flowId);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) listener(argument);
  }
}
