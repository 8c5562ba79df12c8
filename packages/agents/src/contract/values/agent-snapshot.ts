import { agentInterruptToWire, type AgentInterrupt } from "./agent-interrupt.ts";
import { agentMessageToWire, type AgentMessage } from "./agent-message.ts";
import { agentPlanToWire, type AgentPlan } from "./agent-plan.ts";
import { agentStateToWire, type AgentState } from "./agent-state.ts";
import { agentToolCallToWire, type AgentToolCallRecord } from "./agent-tool-call.ts";
import { agentUsageToWire, type AgentUsage } from "./agent-usage.ts";
import { agentUserMessageToWire, type QueuedAgentUserMessage } from "./agent-user-message.ts";
import { contextSummaryToWire, type ContextSummary } from "./context-summary.ts";
import type { SessionSettings } from "./session-settings.ts";
import { scheduledTurnToWire, type ScheduledTurn } from "./scheduled-turn.ts";
import type { WireObject } from "./wire.ts";

/** Everything `get_agent_snapshot` returns, in one committed state. */
export interface AgentSnapshot {
  /** null before the session started. */
  state: AgentState | null;
  messages: AgentMessage[];
  pendingInterrupts: AgentInterrupt[];
  /** The active turn's records, in the order the model made them. */
  toolCalls: AgentToolCallRecord[];
  usage: AgentUsage;
  queuedMessageCount: number;
  /**
   * The session's plan. Omitted while there is none, so a session that uses
   * no plans decodes to its 0.1.0 shape; the wire always carries `plan`.
   * @default null
   */
  plan?: AgentPlan | null;
  /** The messages `send_user_message` queued, oldest first, with the Channel message IDs that steer or delete them. */
  queuedMessages: QueuedAgentUserMessage[];
  /** Steered messages the active turn has not taken yet, oldest first. */
  steeredMessages: QueuedAgentUserMessage[];
  /** The summary of the earlier conversation, null until the session first compacts. */
  contextSummary: ContextSummary | null;
  /**
   * The settings the next turn starts with (`SessionSettings`), `{}` when
   * there are none. A running turn may still use earlier ones.
   * @default {}
   */
  sessionSettings?: SessionSettings;
  /**
   * The session's scheduled turns, oldest first (a Perdure extension). On
   * the wire as `scheduled_turns` only when there are some, so a session
   * without schedules keeps the contract's shape.
   * @default []
   */
  scheduledTurns?: ScheduledTurn[];
}

/**
 * The snapshot as the contract's wire JSON, with exactly the contract's
 * fields. (Where retention deleted history is on `list_agent_messages`
 * pages, `deleted_before_sequence`; a snapshot's `messages` start at the
 * oldest stored message.)
 */
export function agentSnapshotToWire(snapshot: AgentSnapshot): WireObject {
  const queued = (message: QueuedAgentUserMessage): WireObject => ({ message_id: message.messageId, ...agentUserMessageToWire(message) });
  return {
    state: snapshot.state === null ? null : agentStateToWire(snapshot.state),
    messages: snapshot.messages.map(agentMessageToWire),
    pending_interrupts: snapshot.pendingInterrupts.map(agentInterruptToWire),
    tool_calls: snapshot.toolCalls.map(agentToolCallToWire),
    usage: agentUsageToWire(snapshot.usage),
    queued_message_count: snapshot.queuedMessageCount,
    plan: snapshot.plan === undefined || snapshot.plan === null ? null : agentPlanToWire(snapshot.plan),
    queued_messages: snapshot.queuedMessages.map(queued),
    steered_messages: snapshot.steeredMessages.map(queued),
    context_summary: snapshot.contextSummary === null ? null : contextSummaryToWire(snapshot.contextSummary),
    session_settings: snapshot.sessionSettings ?? {},
    ...(snapshot.scheduledTurns === undefined || snapshot.scheduledTurns.length === 0 ? {} : { scheduled_turns: snapshot.scheduledTurns.map(scheduledTurnToWire) }),
  };
}
