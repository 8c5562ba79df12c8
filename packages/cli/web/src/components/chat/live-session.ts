// What the chat needs to know about the session beyond its messages, read
// from the inspector's polled snapshot (refreshed on every live event).
import type { SessionInspection, WireInterrupt, WireQueuedMessage, WireToolCall } from "../../lib/api.ts";

export interface LiveSession {
  /** undefined until the first inspection arrived. */
  flowStatus: string | undefined;
  agentStatus: string | null;
  activeTurnId: string | null;
  /** How many turns the session started. */
  turnCount: number;
  /** The error of the last turn when it failed, until a later turn completes. */
  lastTurnError: string | null;
  pendingInterrupts: WireInterrupt[];
  queuedMessages: WireQueuedMessage[];
  /** Messages steered into the active turn that it has not taken yet. */
  steeredMessages: WireQueuedMessage[];
  /** Whether the active turn can be steered or stopped. */
  acceptsTurnControl: boolean;
  /** Whether the session's agent takes plan-mode messages; undefined until the first inspection arrived. */
  planModeEnabled: boolean | undefined;
  /** The active turn's tool call records by tool call ID. */
  toolCalls: ReadonlyMap<string, WireToolCall>;
  plan: unknown;
  /** When the inspection was read (ms since epoch), 0 before. */
  loadedAt: number;
}

export function liveSessionOf(inspection: SessionInspection | undefined, loadedAt: number): LiveSession {
  const snapshot = inspection?.snapshot;
  return {
    flowStatus: inspection?.status,
    agentStatus: snapshot?.state?.status ?? null,
    activeTurnId: snapshot?.state?.active_turn_id ?? null,
    turnCount: snapshot?.state?.turn_count ?? 0,
    lastTurnError: snapshot?.state?.last_turn_error ?? null,
    pendingInterrupts: snapshot?.pending_interrupts ?? [],
    queuedMessages: snapshot?.queued_messages ?? [],
    steeredMessages: snapshot?.steered_messages ?? [],
    acceptsTurnControl: snapshot?.state?.accepts_turn_control === true,
    planModeEnabled: inspection?.features?.planModeEnabled,
    toolCalls: new Map((snapshot?.tool_calls ?? []).map((call) => [call.tool_call_id, call])),
    plan: snapshot?.plan ?? null,
    loadedAt,
  };
}
