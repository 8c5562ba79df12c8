/**
 * Where a session's messages are, for the inspector: the `AgentMessages`
 * window and the archive chunks `AgentMessageIndex` lists, and where
 * retention's deletions end.
 */
import type { AgentMessageIndex } from "../session/messages/agent-message-index.ts";

/** One archive chunk, as the inspector lists it. */
export interface InspectedMessageChunk {
  firstSequence: number;
  lastSequence: number;
  messageCount: number;
  /** An oversized message's own chunk among the window's messages. */
  isOversized: boolean;
}

/** The session's message storage at a glance. */
export interface InspectedMessageStorage {
  /** Whether `AgentMessageIndex` exists; without it every message is in the window. */
  hasIndex: boolean;
  windowFirstSequence: number;
  windowMessageCount: number;
  chunks: InspectedMessageChunk[];
  /** The oldest stored message once retention deleted earlier ones, else null. */
  deletedBeforeSequence: number | null;
}

/** Describes the storage of `messageCount` messages under `index` (undefined: all in the window). */
export function describeMessageStorage(index: AgentMessageIndex | undefined, messageCount: number): InspectedMessageStorage {
  const windowFirstSequence = index?.windowFirstSequence ?? 1;
  const chunks = (index?.chunks ?? []).map((chunk) => ({
    firstSequence: chunk.firstSequence,
    lastSequence: chunk.lastSequence,
    messageCount: chunk.lastSequence - chunk.firstSequence + 1,
    isOversized: chunk.firstSequence >= windowFirstSequence,
  }));
  const inOwnChunks = chunks.filter((chunk) => chunk.isOversized).reduce((sum, chunk) => sum + chunk.messageCount, 0);
  return {
    hasIndex: index !== undefined,
    windowFirstSequence,
    windowMessageCount: Math.max(0, messageCount - windowFirstSequence + 1 - inOwnChunks),
    chunks,
    deletedBeforeSequence: index !== undefined && index.firstSequence > 1 ? index.firstSequence : null,
  };
}
