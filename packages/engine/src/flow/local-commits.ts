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

/** One Attribute or map instance a commit wrote: its stored JSON text, or null when the commit deleted it. */
export interface WrittenValue {
  readonly name: string;
  readonly key: string;
  readonly value: string | null;
}

/**
 * What one commit wrote: the names, and the values when the committer knows
 * them (each Attribute or instance once, the last value it wrote).
 */
export interface LocalCommit {
  readonly names: WrittenNames;
  readonly values: readonly WrittenValue[] | undefined;
  /** The commit's send mark ({@link markCommitSend}), when the committer took one. */
  readonly sent: number | undefined;
}

const listeners = new LocalFlowListeners<LocalCommit>();

/** Send marks handed out so far in this process. */
let sendMarks = 0;

/**
 * Marks a commit request about to be sent, for {@link deliverLocalCommit}.
 * A mark greater than {@link lastCommitSendMark} at some moment belongs to a
 * request sent after that moment, so its commit landed after everything a
 * read that returned before that moment saw.
 */
export function markCommitSend(): number {
  sendMarks += 1;
  return sendMarks;
}

/** The last send mark handed out in this process. */
export function lastCommitSendMark(): number {
  return sendMarks;
}

/**
 * Calls `listener` after each commit in this process that wrote `flowId`'s
 * Attributes through `store`, with the names (and values) it wrote; returns
 * the function that stops listening.
 */
export function onLocalCommit(store: Store, flowId: string, listener: (written: WrittenNames, values: readonly WrittenValue[] | undefined, sent: number | undefined) => void): () => void {
  return listeners.listen(store, flowId, (commit) => listener(commit.names, commit.values, commit.sent));
}

/**
 * Tells this process's listeners that a commit wrote `flowId`'s Attributes
 * named `names`, with `values` when known (each Attribute or instance once)
 * and the mark `sent` its committer took before sending it
 * ({@link markCommitSend}); costs a map lookup when nobody listens.
 */
export function deliverLocalCommit(store: Store, flowId: string, names?: Iterable<string>, values?: readonly WrittenValue[], sent?: number): void {
  if (!listeners.has(store, flowId)) return;
  listeners.deliver(store, flowId, { names: names === undefined ? undefined : new Set(names), values, sent });
}
