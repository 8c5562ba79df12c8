/**
 * Reads stored messages in an RPC, from one committed state: the chunks
 * `AgentMessageIndex` lists and the `AgentMessages` window. A session
 * without an index (new, or written by 0.1.0 and not yet moved) keeps every
 * message in the window; a half-moved one has both.
 */
import type { RpcContext } from "@perdure/engine";
import { messageSequenceKey, type AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import type { AgentMessageIndex } from "./agent-message-index.ts";

/** Sequences from `first` up to, not including, `end`. */
export interface SequenceRange {
  first: number;
  end: number;
}

/** The stored messages in `range` (every stored message without one), oldest first. */
export async function readStoredMessages(
  context: RpcContext,
  persistence: AgentSessionPersistence,
  index: AgentMessageIndex | undefined,
  range?: SequenceRange,
): Promise<AgentMessage[]> {
  const first = range?.first ?? 1;
  const end = range?.end ?? Number.MAX_SAFE_INTEGER;
  const bySequence = new Map<number, AgentMessage>();
  for (const chunk of index?.chunks ?? []) {
    if (chunk.lastSequence < first || chunk.firstSequence >= end) continue;
    const stored = await context.read(persistence.agentMessageChunks.instance(messageSequenceKey(chunk.firstSequence)));
    for (const message of stored?.messages ?? []) {
      if (message.sequence >= first && message.sequence < end) bySequence.set(message.sequence, message);
    }
  }
  const keyRange = range === undefined ? undefined : { fromKey: messageSequenceKey(first), toKey: messageSequenceKey(end) };
  for (const key of await context.keys(persistence.agentMessages, keyRange)) {
    const message = await context.read(persistence.agentMessages.instance(key));
    if (message !== undefined) bySequence.set(message.sequence, message);
  }
  return [...bySequence.values()].sort((left, right) => left.sequence - right.sequence);
}

/** The oldest stored sequence once retention deleted earlier messages, else null. */
export function deletedBeforeSequenceOf(index: AgentMessageIndex | undefined): number | null {
  return index !== undefined && index.firstSequence > 1 ? index.firstSequence : null;
}
