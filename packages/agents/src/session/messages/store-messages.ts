/**
 * Stores newly numbered messages: each into the window, or an oversized one
 * straight into its own chunk, then rolls the window over and applies
 * retention, all in the calling Step's commit. `AgentMessageIndex` is
 * written only when one of these changed it.
 */
import type { StepContext } from "@perdure/engine";
import { messageSequenceKey, type AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import { agentMessageBytes, agentMessageChunkBytes } from "./agent-message-chunk.ts";
import { isSameAgentMessageIndex } from "./agent-message-index.ts";
import { deleteRetainedChunks } from "./apply-retention.ts";
import { copyMessageIndex, readMessageIndex } from "./message-index-view.ts";
import { messageStorageOptionsOf } from "./message-storage-registry.ts";
import { rollOverWindow } from "./roll-over-window.ts";

/**
 * Writes `messages` (numbered after the stored ones, ending at
 * `messageCount`) and keeps the window within its size. The Step must have
 * loaded the whole window (`agentMessages.all()`).
 */
export function storeMessages(context: StepContext, persistence: AgentSessionPersistence, messages: readonly AgentMessage[], messageCount: number): void {
  const options = messageStorageOptionsOf(persistence);
  const stored = readMessageIndex(context, persistence);
  const index = copyMessageIndex(stored);
  for (const message of messages) {
    const key = messageSequenceKey(message.sequence);
    // Its first store writes the largest value it will ever need: a message too large for the store fails this Step.
    if (agentMessageChunkBytes([agentMessageBytes(message)]) > options.messageChunkMaxBytes) {
      context.write(persistence.agentMessageChunks.instance(key), { messages: [message] });
      index.chunks.push({ firstSequence: message.sequence, lastSequence: message.sequence });
    } else {
      context.write(persistence.agentMessages.instance(key), message);
    }
  }
  rollOverWindow(context, persistence, options, index, messageCount);
  deleteRetainedChunks(context, persistence, options, index, messageCount);
  // No index means every message is in the window: keep it unset until the first chunk.
  if (stored === undefined && index.chunks.length === 0) return;
  if (!isSameAgentMessageIndex(stored, index)) context.write(persistence.agentMessageIndex, index);
}
