/**
 * The data part that says how a steered or stopped turn ended
 * (`turn_steered`, `turn_cancelled`), sent before the stream finishes with
 * reason `other`, so a page can tell the person why the answer stopped.
 * docs/decisions/2026-12-03-turn-control-and-tool-tasks-in-ui-streams.md
 */
import type { AgentTurnControlChunk } from "../contract/ui-stream/data-parts.ts";

/** The part of a `turn_steered` or `turn_cancelled` event of `turnId`. */
export function turnControlChunk(turnId: string, type: "turn_steered" | "turn_cancelled", payload: Record<string, unknown>): AgentTurnControlChunk {
  const count = (value: unknown): number => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  return {
    type: "data-agent-turn-control",
    id: `${turnId}-turn-control`,
    data: {
      turnId,
      outcome: type === "turn_steered" ? "steered" : "cancelled",
      steeredMessageCount: type === "turn_steered" ? count(payload.steered_message_count) : 0,
      messageCount: count(payload.message_count),
    },
  };
}
