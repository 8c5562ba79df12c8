/**
 * `AgentMessageIndex`: where a session's stored messages are. Unset until
 * the first chunk is written, which means every message is in the
 * `AgentMessages` window (a new session, or one a 0.1.0 Worker wrote).
 */
import { asWireObject, readNumber, type WireObject } from "../../contract/values/wire.ts";

/** The first and last sequence of one kept chunk. */
export interface AgentMessageChunkRange {
  firstSequence: number;
  lastSequence: number;
}

export interface AgentMessageIndex {
  /** Every kept chunk, oldest first; a chunk at or after `windowFirstSequence` holds one oversized message among the window's. */
  chunks: AgentMessageChunkRange[];
  /** The oldest stored message; above 1 once retention deleted earlier ones. */
  firstSequence: number;
  /** The oldest message of the window; the window holds every later message not in an oversized chunk. */
  windowFirstSequence: number;
}

export function agentMessageIndexToWire(index: AgentMessageIndex): WireObject {
  return {
    chunks: index.chunks.map((chunk) => ({ first_sequence: chunk.firstSequence, last_sequence: chunk.lastSequence })),
    first_sequence: index.firstSequence,
    window_first_sequence: index.windowFirstSequence,
  };
}

export function agentMessageIndexFromWire(data: unknown): AgentMessageIndex {
  const object = asWireObject(data, "AgentMessageIndex");
  const chunks = Array.isArray(object.chunks)
    ? object.chunks.map((entry) => {
      const range = asWireObject(entry, "AgentMessageIndex chunk");
      return { firstSequence: readNumber(range, "first_sequence", 1), lastSequence: readNumber(range, "last_sequence", 1) };
    })
    : [];
  return { chunks, firstSequence: readNumber(object, "first_sequence", 1), windowFirstSequence: readNumber(object, "window_first_sequence", 1) };
}

/** Whether two indexes say the same thing, so an unchanged index is not written again. */
export function isSameAgentMessageIndex(left: AgentMessageIndex | undefined, right: AgentMessageIndex): boolean {
  if (left === undefined) return false;
  return left.firstSequence === right.firstSequence
    && left.windowFirstSequence === right.windowFirstSequence
    && left.chunks.length === right.chunks.length
    && left.chunks.every((chunk, position) => chunk.firstSequence === right.chunks[position]?.firstSequence && chunk.lastSequence === right.chunks[position]?.lastSequence);
}
