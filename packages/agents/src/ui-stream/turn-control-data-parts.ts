/**
 * The data part that says how a steered or stopped turn ended
 * (`turn_steered`, `turn_cancelled`), sent before the stream finishes with
 * reason `other`, so a page can tell the person why the answer stopped.
 * docs/decisions/2026-12-03-turn-control-and-tool-tasks-in-ui-streams.md
 */

/** How a turn ended early. */
export interface AgentTurnControlData {
  turnId: string;
  /** `steered`: new messages took over, in a new turn. `cancelled`: `cancel_turn` stopped it. */
  outcome: "steered" | "cancelled";
  /** How many steered messages the follow-up turn starts with; 0 for a cancelled turn. */
  steeredMessageCount: number;
  /** The messages the turn stored after its user message. */
  messageCount: number;
}

/** `data-agent-turn-control`, with the `id` `<turnId>-turn-control`. */
export interface AgentTurnControlChunk {
  type: "data-agent-turn-control";
  id: string;
  data: AgentTurnControlData;
}

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
