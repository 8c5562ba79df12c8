/**
 * The resolved message storage options of each session Flow's persistence
 * definitions, so that `appendMessages(context, persistence, …)` can roll
 * the window over without every caller passing the options along.
 */
import type { ResolvedMessageStorageOptions } from "./message-storage-options.ts";

const optionsByPersistence = new WeakMap<object, ResolvedMessageStorageOptions>();

/** Records the options of one set of persistence definitions; `createAgentSessionPersistence` calls it. */
export function registerMessageStorageOptions(persistence: object, options: ResolvedMessageStorageOptions): void {
  optionsByPersistence.set(persistence, {
    messageWindowSize: options.messageWindowSize,
    messageChunkSize: options.messageChunkSize,
    messageChunkMaxBytes: options.messageChunkMaxBytes,
    retainedMessageLimit: options.retainedMessageLimit,
  });
}

/** The message storage options of persistence definitions that `createAgentSessionPersistence` built. */
export function messageStorageOptionsOf(persistence: object): ResolvedMessageStorageOptions {
  const options = optionsByPersistence.get(persistence);
  if (options === undefined) throw new Error("these persistence definitions were not built by createAgentSessionPersistence, so they have no message storage options");
  return options;
}
