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
}

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
  };
}
