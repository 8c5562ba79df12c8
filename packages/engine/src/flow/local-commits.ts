/**
 * Commits in this process that wrote a Flow's Attributes, told to the
 * `client.waitForAttributes` calls on the same store object, so that a
 * waiting Client reads again right after such a commit instead of polling.
 * Only commits made through this store object are told; a Client in another
 * process reads again on the Flow's Stream wake-ups, its end, or the store's
 * poll interval.
 */
import type { Store } from "../store/store.ts";
import { LocalFlowListeners } from "./local-listeners.ts";

const listeners = new LocalFlowListeners<void>();

/** Calls `listener` after each commit in this process that wrote `flowId`'s Attributes through `store`; returns the function that stops listening. */
export function onLocalCommit(store: Store, flowId: string, listener: () => void): () => void {
  return listeners.listen(store, flowId, listener);
}

/** Tells this process's listeners that a commit wrote `flowId`'s Attributes; costs a map lookup when nobody listens. */
export function deliverLocalCommit(store: Store, flowId: string): void {
  listeners.deliver(store, flowId, undefined);
}
