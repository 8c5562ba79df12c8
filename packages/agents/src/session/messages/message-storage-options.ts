/**
 * The message storage options of a session Flow (window, chunks, retention)
 * and the fixed per-commit bounds of a rollover. `resolveAgentSessionOptions`
 * calls {@link resolveMessageStorageOptions}; each default lives here and in
 * the TSDoc of `AgentSessionOptions`.
 */
import { InvalidInputError } from "@perdure/engine";

/** Most chunks one commit moves out of the window, so a large backlog moves over several commits. */
export const messageRolloverMaxChunksPerCommit = 4;

/** Most chunk bytes one commit moves out of the window (8 MiB). */
export const messageRolloverMaxBytesPerCommit = 8 * 1024 * 1024;

/** Largest `messageChunkMaxBytes`: one chunk always fits in one commit's rollover bytes. */
const largestChunkMaxBytes = messageRolloverMaxBytesPerCommit;

/** The message storage options as public options spell them. */
export interface MessageStorageOptions {
  messageWindowSize?: number;
  messageChunkSize?: number;
  messageChunkMaxBytes?: number;
  retainedMessageLimit?: number | null;
}

/** Resolved message storage options. */
export interface ResolvedMessageStorageOptions {
  messageWindowSize: number;
  messageChunkSize: number;
  messageChunkMaxBytes: number;
  /** null keeps every message. */
  retainedMessageLimit: number | null;
}

function integerOption(name: string, value: unknown, fallback: number, minimum: number, maximum: number, rule: string): number {
  const resolved = value ?? fallback;
  if (typeof resolved !== "number" || !Number.isSafeInteger(resolved) || resolved < minimum || resolved > maximum) {
    throw new InvalidInputError(`agent session option ${name} ${typeof value === "string" ? JSON.stringify(value) : String(value)} is invalid: use ${rule}`);
  }
  return resolved;
}

/** Validates the message storage options and fills in their defaults. */
export function resolveMessageStorageOptions(options: MessageStorageOptions): ResolvedMessageStorageOptions {
  const messageChunkSize = integerOption("messageChunkSize", options.messageChunkSize, 32, 1, Number.MAX_SAFE_INTEGER, "a positive integer");
  const messageWindowSize = integerOption("messageWindowSize", options.messageWindowSize, 64, 1, Number.MAX_SAFE_INTEGER, "a positive integer");
  if (messageWindowSize < messageChunkSize) {
    throw new InvalidInputError(`agent session option messageWindowSize ${messageWindowSize} is invalid: use at least messageChunkSize (${messageChunkSize}), so a rollover can fill a chunk`);
  }
  const messageChunkMaxBytes = integerOption("messageChunkMaxBytes", options.messageChunkMaxBytes, 1024 * 1024, 1, largestChunkMaxBytes, `an integer from 1 to ${largestChunkMaxBytes}`);
  const limit = options.retainedMessageLimit;
  const retainedMessageLimit = limit === null ? null : integerOption("retainedMessageLimit", limit, 1000, 1, Number.MAX_SAFE_INTEGER, "a positive integer, or null to keep every message");
  return { messageWindowSize, messageChunkSize, messageChunkMaxBytes, retainedMessageLimit };
}
