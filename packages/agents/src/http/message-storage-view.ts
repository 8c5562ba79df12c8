/**
 * Where a session's messages are, for the inspector: the `AgentMessages`
 * window and the archive chunks `AgentMessageIndex` lists, and where
 * retention's deletions end.
 */
import type { InspectedMessageStorage } from "../contract/ui-stream/session-inspection.ts";
import type { AgentMessageIndex } from "../session/messages/agent-message-index.ts";

export type { InspectedMessageChunk, InspectedMessageStorage } from "../contract/ui-stream/session-inspection.ts";

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
