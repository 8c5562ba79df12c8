import type { Store } from "../store/store.ts";

/**
 * Writes one encoded Stream message now, and wakes readers: in one request
 * where the store offers it, else in its own short transaction.
 */
export async function appendToStream(store: Store, flowId: string, flowType: string, stream: string, capacityBytes: number, value: string): Promise<number> {
  const writtenAt = store.clock.now();
  const oneRequest = store.oneRequest?.appendStream;
  if (oneRequest !== undefined) return oneRequest({ flowId, flowType, stream, value, writtenAt, capacityBytes });
  const index = await store.transaction((transaction) => transaction.appendStream(flowId, flowType, stream, value, writtenAt, capacityBytes));
  store.wake({ kind: "stream", flowId, stream });
  return index;
}
