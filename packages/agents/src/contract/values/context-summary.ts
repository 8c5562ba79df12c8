/**
 * The `ContextSummary` Attribute: the summary of the conversation up to a
 * message sequence, written by `CompactContext`. The model input of later
 * model calls starts with it, followed by the messages after `lastSequence`.
 */
import { asWireObject, readNumber, readString, type WireObject } from "./wire.ts";

export interface ContextSummary {
  /** The summary text the runner returned from `summarizeContext`. */
  summary: string;
  /** The last message sequence the summary covers. */
  lastSequence: number;
  /** 1 for the session's first summary; each compaction adds 1. */
  generation: number;
  /** The turn whose `CompactContext` wrote it. */
  turnId: string;
  /** ISO 8601 time the summary was stored. */
  createdAt: string;
}

export function contextSummaryToWire(summary: ContextSummary): WireObject {
  return {
    summary: summary.summary,
    last_sequence: summary.lastSequence,
    generation: summary.generation,
    turn_id: summary.turnId,
    created_at: summary.createdAt,
  };
}

export function contextSummaryFromWire(data: unknown): ContextSummary {
  const object = asWireObject(data, "ContextSummary");
  return {
    summary: readString(object, "summary", ""),
    lastSequence: readNumber(object, "last_sequence", 0),
    generation: readNumber(object, "generation", 1),
    turnId: readString(object, "turn_id", ""),
    createdAt: readString(object, "created_at", ""),
  };
}
