// Which turn the chat's Stop button stops, and what the chat says about the
// turns this tab stopped. The session's snapshot is read every 2 s, so it can
// still name the previous turn (or none) while this tab already streams the
// next one; a Stop bound to that stale ID would stop nothing.
import type { TurnControlData } from "./agent-parts.ts";

/** The number `n` of a `turn-<n>` ID; 0 for another form. */
export function turnNumberOf(turnId: string): number {
  const match = /^turn-(\d+)$/.exec(turnId);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/** The turn Stop refers to: the newer of the snapshot's active turn and the turn this tab streams. */
export function turnToStop(snapshotTurnId: string | null, streamingTurnId: string | null): string | null {
  if (snapshotTurnId === null || streamingTurnId === null) return snapshotTurnId ?? streamingTurnId;
  return turnNumberOf(streamingTurnId) > turnNumberOf(snapshotTurnId) ? streamingTurnId : snapshotTurnId;
}

/**
 * The outcomes the chat shows: those the turns' streams sent, and for a turn
 * this tab stopped (`cancel_turn` took the request) that is no longer
 * active, "cancelled" when its stream did not say so (the tab lost it).
 */
export function withLocalStops(
  outcomes: ReadonlyMap<string, TurnControlData>,
  stoppedTurnIds: ReadonlySet<string>,
  activeTurnId: string | null,
): ReadonlyMap<string, TurnControlData> {
  const missing = [...stoppedTurnIds].filter((turnId) => turnId !== activeTurnId && !outcomes.has(turnId));
  if (missing.length === 0) return outcomes;
  const merged = new Map(outcomes);
  for (const turnId of missing) merged.set(turnId, { turnId, outcome: "cancelled", steeredMessageCount: 0, messageCount: 0 });
  return merged;
}
