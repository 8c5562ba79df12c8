import type { Store } from "../store/store.ts";

/** Writes one encoded Stream message now, in its own short transaction, and wakes readers. */
export async function appendToStream(store: Store, flowId: string, flowType: string, stream: string, capacityBytes: number, value: string): Promise<number> {
  const writtenAt = store.clock.now();
  const index = await store.transaction((transaction) => transaction.appendStream(flowId, flowType, stream, value, writtenAt, capacityBytes));
  store.wake({ kind: "stream", flowId, stream });
  return index;
}
