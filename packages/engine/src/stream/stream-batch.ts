import type { StreamAppend } from "../store/step-commit.ts";
import type { Store, StoreTransaction } from "../store/store.ts";

/**
 * A batch in the order it is written: by Stream name, each Stream's messages
 * in the order they were written. Messages of different Streams have no
 * order between them (each Stream numbers its own), and one order of
 * Streams makes every batch take their locks in the same order.
 */
export function sortedStreamBatch(batch: readonly StreamAppend[]): StreamAppend[] {
  return batch
    .map((append, position) => ({ append, position }))
    .sort((a, b) => (a.append.stream < b.append.stream ? -1 : a.append.stream > b.append.stream ? 1 : a.position - b.position))
    .map(({ append }) => append);
}

/**
 * Writes a batch of one Flow's Stream messages now, sorted as
 * {@link sortedStreamBatch} does, and wakes readers of each Stream once: in
 * one request where the store offers it, else in one transaction (or, on a
 * PostgreSQL schema without migration 0013, one request per message).
 * Returns the messages' indexes in the sorted batch's order.
 */
export async function appendStreamBatch(store: Store, batch: readonly StreamAppend[]): Promise<number[]> {
  if (batch.length === 0) return [];
  const sorted = sortedStreamBatch(batch);
  const operations = store.oneRequest;
  if (operations?.appendStreams !== undefined) return operations.appendStreams(sorted);
  const single = operations?.appendStream;
  if (single !== undefined) {
    const indexes: number[] = [];
    for (const append of sorted) indexes.push(await single(append));
    return indexes;
  }
  const indexes = await store.transaction((transaction) => appendStreamsInTransaction(transaction, sorted));
  wakeStreamReaders(store, sorted);
  return indexes;
}

/**
 * Appends a sorted batch of one Flow's messages inside `transaction` and
 * returns their indexes: in one call that takes every Stream head before any
 * byte count where the transaction offers it (the order the store's commits
 * and batches take them), else message by message.
 */
export async function appendStreamsInTransaction(transaction: StoreTransaction, batch: readonly StreamAppend[]): Promise<number[]> {
  if (batch.length === 0) return [];
  if (transaction.appendStreams !== undefined) return transaction.appendStreams(batch);
  const indexes: number[] = [];
  for (const { flowId, flowType, stream, value, writtenAt, capacityBytes } of batch) {
    indexes.push(await transaction.appendStream(flowId, flowType, stream, value, writtenAt, capacityBytes));
  }
  return indexes;
}

/** Wakes this store's and other processes' readers of each Stream a committed transaction appended to, once each. */
export function wakeStreamReaders(store: Pick<Store, "wake">, batch: readonly StreamAppend[]): void {
  const woken = new Set<string>();
  for (const { flowId, stream } of batch) {
    const key = `${flowId}\u0000${stream}`;
    if (woken.has(key)) continue;
    woken.add(key);
    store.wake({ kind: "stream", flowId, stream });
  }
}
