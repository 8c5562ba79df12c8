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

/** The names of the Attributes (and Attribute maps) a commit wrote; undefined when not known. */
export type WrittenNames = ReadonlySet<string> | undefined;

const listeners = new LocalFlowListeners<WrittenNames>();

/**
 * Calls `listener` after each commit in this process that wrote `flowId`'s
 * Attributes through `store`, with the names it wrote; returns the function
 * that stops listening.
 */
export function onLocalCommit(store: Store, flowId: string, listener: (written: WrittenNames) => void): () => void {
  return listeners.listen(store, flowId, listener);
}

/** Tells this process's listeners that a commit wrote `flowId`'s Attributes named `names`; costs a map lookup when nobody listens. */
export function deliverLocalCommit(store: Store, flowId: string, names?: Iterable<string>): void {
  if (!listeners.has(store, flowId)) return;
  listeners.deliver(store, flowId, names === undefined ? undefined : new Set(names));
}
