/**
 * Reading `AgentMessageIndex` in a Step: the index as it stands (staged
 * writes included), or the index of a session with no chunks yet, whose
 * every message is in the window.
 */
import type { StepContext } from "@perdure/engine";
import type { AgentSessionPersistence } from "../persistence.ts";
import type { AgentMessageChunkRange, AgentMessageIndex } from "./agent-message-index.ts";

/** The stored index, or undefined while every message is in the window. */
export function readMessageIndex(context: StepContext, persistence: AgentSessionPersistence): AgentMessageIndex | undefined {
  return context.read(persistence.agentMessageIndex);
}

/** A working copy of the index; a session without one starts with every message in the window. */
export function copyMessageIndex(index: AgentMessageIndex | undefined): AgentMessageIndex {
  if (index === undefined) return { chunks: [], firstSequence: 1, windowFirstSequence: 1 };
  return { chunks: index.chunks.map((chunk) => ({ ...chunk })), firstSequence: index.firstSequence, windowFirstSequence: index.windowFirstSequence };
}

/** Oversized messages' chunks at or after the window's first sequence. */
export function chunksInWindow(index: AgentMessageIndex): AgentMessageChunkRange[] {
  return index.chunks.filter((chunk) => chunk.firstSequence >= index.windowFirstSequence);
}

/** How many messages the `AgentMessages` window holds, from the index and the message count. */
export function windowMessageCount(index: AgentMessageIndex, messageCount: number): number {
  const inOwnChunks = chunksInWindow(index).reduce((sum, chunk) => sum + chunk.lastSequence - chunk.firstSequence + 1, 0);
  return Math.max(0, messageCount - index.windowFirstSequence + 1 - inOwnChunks);
}

/** The kept chunk that holds `sequence`, if any. */
export function chunkHolding(index: AgentMessageIndex | undefined, sequence: number): AgentMessageChunkRange | undefined {
  return index?.chunks.find((chunk) => chunk.firstSequence <= sequence && sequence <= chunk.lastSequence);
}
