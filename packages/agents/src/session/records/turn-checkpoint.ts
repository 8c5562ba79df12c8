/**
 * `TurnCheckpoints`: the session as it stood just before each turn started,
 * written in the commit that starts the turn. A fork before `turn-<n>` (or
 * after `turn-<n-1>`) starts from checkpoint n: its message count cuts the
 * transcript, and its plan, summary, settings and usage are the session's
 * at that boundary, not the later ones.
 */
import { agentPlanFromWire, agentPlanToWire, type AgentPlan } from "../../contract/values/agent-plan.ts";
import { agentUsageFromWire, agentUsageToWire, emptyAgentUsage, type AgentUsage } from "../../contract/values/agent-usage.ts";
import { contextSummaryFromWire, contextSummaryToWire, type ContextSummary } from "../../contract/values/context-summary.ts";
import { sessionSettingsFromWire, type SessionSettings } from "../../contract/values/session-settings.ts";
import type { InteractionMode } from "../../contract/values/agent-state.ts";
import { asWireObject, readNullableString, readNumber, type WireObject } from "../../contract/values/wire.ts";

export interface TurnCheckpoint {
  /** Turns before this one. */
  turnCount: number;
  /** Messages stored before this turn's first message. */
  messageCount: number;
  lastTurnError: string | null;
  plan: AgentPlan | null;
  contextSummary: ContextSummary | null;
  sessionSettings: SessionSettings | null;
  usage: AgentUsage;
  /** ISO 8601 time the turn started. */
  createdAt: string;
  /** The turn's kind, for a replay; absent on checkpoints written before it was kept. @default "chat" */
  interactionMode?: InteractionMode;
  /** `steer` when steered messages started the turn (ending the one before), for a replay. @default "message" */
  startedBy?: "message" | "steer";
}

const interactionModes: readonly string[] = ["chat", "planning", "executing"];

export function turnCheckpointToWire(checkpoint: TurnCheckpoint): WireObject {
  return {
    turn_count: checkpoint.turnCount,
    message_count: checkpoint.messageCount,
    last_turn_error: checkpoint.lastTurnError,
    plan: checkpoint.plan === null ? null : agentPlanToWire(checkpoint.plan),
    context_summary: checkpoint.contextSummary === null ? null : contextSummaryToWire(checkpoint.contextSummary),
    session_settings: checkpoint.sessionSettings,
    usage: agentUsageToWire(checkpoint.usage),
    created_at: checkpoint.createdAt,
    ...(checkpoint.interactionMode === undefined ? {} : { interaction_mode: checkpoint.interactionMode }),
    ...(checkpoint.startedBy === undefined ? {} : { started_by: checkpoint.startedBy }),
  };
}

export function turnCheckpointFromWire(data: unknown): TurnCheckpoint {
  const object = asWireObject(data, "TurnCheckpoint");
  return {
    turnCount: readNumber(object, "turn_count", 0),
    messageCount: readNumber(object, "message_count", 0),
    lastTurnError: readNullableString(object, "last_turn_error"),
    plan: object.plan === null || object.plan === undefined ? null : agentPlanFromWire(object.plan),
    contextSummary: object.context_summary === null || object.context_summary === undefined ? null : contextSummaryFromWire(object.context_summary),
    sessionSettings: object.session_settings === null || object.session_settings === undefined ? null : sessionSettingsFromWire(object.session_settings),
    usage: object.usage === undefined ? emptyAgentUsage() : agentUsageFromWire(object.usage),
    createdAt: readNullableString(object, "created_at") ?? "",
    ...(typeof object.interaction_mode === "string" && interactionModes.includes(object.interaction_mode) ? { interactionMode: object.interaction_mode as InteractionMode } : {}),
    ...(object.started_by === "steer" || object.started_by === "message" ? { startedBy: object.started_by } : {}),
  };
}
