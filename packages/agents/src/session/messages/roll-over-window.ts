/**
 * Rollover: while the window holds more than `messageWindowSize` messages,
 * its oldest move into new immutable chunks, within one commit's bounds
 * (`messageRolloverMaxChunksPerCommit`, `messageRolloverMaxBytesPerCommit`).
 * What does not fit moves with the next append.
 */
import type { StepContext } from "@perdure/engine";
import { messageSequenceKey, type AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import { agentMessageBytes, agentMessageChunkBytes } from "./agent-message-chunk.ts";
import type { AgentMessageIndex } from "./agent-message-index.ts";
import { messageRolloverMaxBytesPerCommit, messageRolloverMaxChunksPerCommit, type ResolvedMessageStorageOptions } from "./message-storage-options.ts";
import { windowMessageCount } from "./message-index-view.ts";

/** The next chunk to close: the oldest window messages up to the chunk's message and byte limits. */
interface ClosedChunk {
  messages: AgentMessage[];
  bytes: number;
}

function readWindowMessage(context: StepContext, persistence: AgentSessionPersistence, sequence: number): AgentMessage {
  const message = context.read(persistence.agentMessages.instance(messageSequenceKey(sequence)));
  if (message === undefined) throw new Error(`session ${context.flowId} has no message ${sequence} in its AgentMessages window, which AgentMessageIndex says holds it`);
  return message;
}

/** Skips the oversized messages' own chunks at the window's start. */
function skipOwnChunks(index: AgentMessageIndex, sequence: number): number {
  let next = sequence;
  for (;;) {
    const own = index.chunks.find((chunk) => chunk.firstSequence === next);
    if (own === undefined) return next;
    next = own.lastSequence + 1;
  }
}

function closeChunk(context: StepContext, persistence: AgentSessionPersistence, options: ResolvedMessageStorageOptions, index: AgentMessageIndex, first: number, messageCount: number): ClosedChunk {
  const messages: AgentMessage[] = [];
  const sizes: number[] = [];
  // A chunk never reaches over an oversized message's own chunk, so chunk ranges never overlap.
  for (let sequence = first; sequence <= messageCount && messages.length < options.messageChunkSize; sequence += 1) {
    if (index.chunks.some((chunk) => chunk.firstSequence === sequence)) break;
    const message = readWindowMessage(context, persistence, sequence);
    const bytes = agentMessageBytes(message);
    if (messages.length > 0 && agentMessageChunkBytes([...sizes, bytes]) > options.messageChunkMaxBytes) break;
    messages.push(message);
    sizes.push(bytes);
  }
  return { messages, bytes: agentMessageChunkBytes(sizes) };
}

/**
 * Moves the window's oldest messages into chunks while it is over its size
 * and this commit's bounds allow; updates `index` in place and returns
 * whether anything moved.
 */
export function rollOverWindow(
  context: StepContext,
  persistence: AgentSessionPersistence,
  options: ResolvedMessageStorageOptions,
  index: AgentMessageIndex,
  messageCount: number,
): boolean {
  let movedChunks = 0;
  let movedBytes = 0;
  let windowCount = windowMessageCount(index, messageCount);
  while (windowCount > options.messageWindowSize && movedChunks < messageRolloverMaxChunksPerCommit) {
    const first = skipOwnChunks(index, index.windowFirstSequence);
    const chunk = closeChunk(context, persistence, options, index, first, messageCount);
    if (chunk.messages.length === 0 || movedBytes + chunk.bytes > messageRolloverMaxBytesPerCommit) break;
    context.write(persistence.agentMessageChunks.instance(messageSequenceKey(first)), { messages: chunk.messages });
    for (const message of chunk.messages) context.write(persistence.agentMessages.instance(messageSequenceKey(message.sequence)), null);
    const last = first + chunk.messages.length - 1;
    index.chunks.push({ firstSequence: first, lastSequence: last });
    index.chunks.sort((left, right) => left.firstSequence - right.firstSequence);
    index.windowFirstSequence = last + 1;
    windowCount -= chunk.messages.length;
    movedChunks += 1;
    movedBytes += chunk.bytes;
  }
  return movedChunks > 0;
}
