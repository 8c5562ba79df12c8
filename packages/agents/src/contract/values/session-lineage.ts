/**
 * `SessionLineage`: where a forked session came from. Set once, when
 * `forkSession` creates the session; a session that was never forked has none.
 */
import { asWireObject, readNumber, readString, type WireObject } from "./wire.ts";

export interface SessionLineage {
  /** The session this one was forked from. */
  sourceSessionId: string;
  /** How many of the source's turns the fork inherited: it continues after `turn-<throughTurn>` (0: before the first turn). */
  throughTurn: number;
  /** How many of the source's messages the fork inherited (its messages 1 to this number). */
  inheritedMessageCount: number;
  /** ISO 8601 time of the fork, on the store's clock. */
  forkedAt: string;
}

export function sessionLineageToWire(lineage: SessionLineage): WireObject {
  return {
    source_session_id: lineage.sourceSessionId,
    through_turn: lineage.throughTurn,
    inherited_message_count: lineage.inheritedMessageCount,
    forked_at: lineage.forkedAt,
  };
}

export function sessionLineageFromWire(data: unknown): SessionLineage {
  const object = asWireObject(data, "SessionLineage");
  return {
    sourceSessionId: readString(object, "source_session_id", ""),
    throughTurn: readNumber(object, "through_turn", 0),
    inheritedMessageCount: readNumber(object, "inherited_message_count", 0),
    forkedAt: readString(object, "forked_at", ""),
  };
}
