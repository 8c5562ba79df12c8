/**
 * What a session inspector reads: `GET …/sessions/:id/inspect` (Flow status,
 * the Step timeline, the session snapshot as wire JSON, the agent's
 * features, where the messages are, the lineage) and the rows of
 * `GET …/sessions`. The HTTP handler answers with these shapes and the web
 * UI reads them; both use these declarations.
 *
 * Browser-safe: types and constants only, no Node.js or engine imports.
 */
import type { BuiltInToolName } from "../built-in-tool-definitions.ts";
import type { AgentPlanStatus, AgentPlanTaskStatus } from "../values/agent-plan.ts";
import type { SessionLineage } from "../values/session-lineage.ts";

/** One row of `GET …/sessions`. */
export interface ListedSession {
  sessionId: string;
  agent: string;
  /** The Flow status: running, completed, failed or stopped. */
  status: string;
  createdAt: string;
  updatedAt: string;
  /** waiting_for_user_message, running_model, running_tools or compacting_context; null before the session started. */
  agentStatus: string | null;
  turnCount: number;
  activeTurnId: string | null;
  lastTurnError: string | null;
  /** Approvals waiting for a person. */
  pendingApprovals: number;
  /** Questions waiting for an answer. */
  pendingQuestions: number;
}

/** One attempt of a Step method in the timeline. */
export interface TimelineAttempt {
  /** wait_until or execute. */
  method: string;
  attempt: number;
  /** completed, failed or cancelled. */
  status: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  error: string | null;
  outcome: unknown;
}

/** One Step execution in the timeline. */
export interface TimelineExecution {
  executionId: string;
  stepType: string;
  startedAt: string;
  finishedAt: string;
  status: "completed" | "failed" | "cancelled" | "active";
  attempts: TimelineAttempt[];
}

/** The session snapshot as wire JSON (snake_case, as the contract spells it). */
export interface AgentStateWire {
  status: string;
  active_turn_id: string | null;
  turn_count: number;
  message_count: number;
  interaction_mode: string;
  last_turn_error: string | null;
  /** Whether the active turn can be steered or stopped (a turn this release started). */
  accepts_turn_control?: boolean;
  created_at: string;
  updated_at: string;
}

export interface AgentInterruptWire {
  interrupt_id: string;
  /** approval or question. */
  kind: string;
  tool_call_id: string;
  tool_name: string;
  arguments: string;
  turn_id: string;
  deadline?: string | null;
  created_at: string;
  question?: string;
  choices?: string[];
  allows_free_text?: boolean;
}

export interface AgentToolCallWire {
  tool_call_id: string;
  tool_name: string;
  arguments: string;
  effect: string;
  requires_approval: boolean;
  status: string;
  output?: string | null;
  error?: string | null;
  turn_id: string;
  deferral_order: number;
  started_at?: string;
  finished_at?: string;
  /** A `durable_wait` call's due time (ISO 8601). */
  wait_until?: string;
  /** `steered` or `turn_cancelled` when steering or a stop ended the call. */
  cancellation_reason?: string;
  /** The handle of the remote work the tool started, which the session polls. */
  task_id?: string;
  /** Seconds between the task's polls. */
  task_poll_interval_seconds?: number;
  /** True for a call that starts a sub-agent session (`agentTool`) and counts toward `maxSubAgentsPerTurn`. */
  starts_sub_agent?: boolean;
  /** The answers to a tool's own questions, oldest first. */
  input_answers?: { interrupt_id: string; resolution: string; answer: string | null }[];
}

export interface AgentUsageWire {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  reasoning_tokens: number;
  cached_input_tokens: number;
  requests: number;
}

export interface WaitingMessageWire {
  message_id: string;
  text: string;
  plan_mode: boolean;
  sent_at: string;
}

export interface StoredMessageWire {
  sequence: number;
  role: string;
  text: string;
  turn_id?: string | null;
  created_at: string;
  tool_call_id?: string;
  tool_name?: string;
}

export interface AgentSnapshotWire {
  state: AgentStateWire | null;
  messages: StoredMessageWire[];
  pending_interrupts: AgentInterruptWire[];
  tool_calls: AgentToolCallWire[];
  usage: AgentUsageWire;
  queued_message_count: number;
  /** The plan, or null when the session has none. */
  plan: AgentPlanWire | null;
  queued_messages: WaitingMessageWire[];
  steered_messages: WaitingMessageWire[];
  context_summary: ContextSummaryWire | null;
  /** The settings the next turn starts with; absent from an older server. */
  session_settings?: Record<string, unknown>;
}

/** `ContextSummary`: what compaction summarized, through `last_sequence`. */
export interface ContextSummaryWire {
  summary: string;
  last_sequence: number;
  generation: number;
  turn_id: string;
  created_at: string;
}

/** The snapshot's `plan` as wire JSON. */
export interface AgentPlanWire {
  revision: number;
  status: AgentPlanStatus;
  tasks: { content: string; status: AgentPlanTaskStatus }[];
  updated_at: string;
}

/** What a session's agent accepts (`describeAgentSessionFeatures`). */
export interface AgentSessionFeatures {
  /** Whether `send_user_message` and `steer_user_message` accept `planMode` messages. */
  planModeEnabled: boolean;
  /** The enabled built-in tools, in their fixed order. */
  builtInTools: readonly BuiltInToolName[];
  /**
   * The model names the runner accepts as `sessionSettings.model` (its
   * `modelChoices`), for a per-session model picker; empty when it takes none.
   */
  modelChoices: readonly string[];
}

/** One archive chunk, as the inspector lists it. */
export interface InspectedMessageChunk {
  firstSequence: number;
  lastSequence: number;
  messageCount: number;
  /** An oversized message's own chunk among the window's messages. */
  isOversized: boolean;
}

/** The session's message storage at a glance: the `AgentMessages` window and the archive chunks. */
export interface InspectedMessageStorage {
  /** Whether `AgentMessageIndex` exists; without it every message is in the window. */
  hasIndex: boolean;
  windowFirstSequence: number;
  windowMessageCount: number;
  chunks: InspectedMessageChunk[];
  /** The oldest stored message once retention deleted earlier ones, else null. */
  deletedBeforeSequence: number | null;
}

/** Everything the session inspector shows (`GET …/sessions/:id/inspect`), read in a few consistent calls. */
export interface SessionInspection {
  flowId: string;
  flowType: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  activeExecutions: { executionId: string; stepType: string; status: string }[];
  timeline: TimelineExecution[];
  /** The session snapshot without what only the session's Steps use (agent instructions, tool source references). */
  snapshot: AgentSnapshotWire;
  /** What the session's agent accepts (plan mode, built-in tools). */
  features: AgentSessionFeatures;
  /** Where the session's messages are: the window and the archive chunks. */
  messageStorage: InspectedMessageStorage;
  /** The session this one was forked from, and where; null for a session that is no fork. */
  lineage: SessionLineage | null;
  /** The sessions forked from this one, as far as the inspector looked. @default none */
  forks?: InspectedForks;
  /** For a sub-agent session (`agentTool`): its parent session and the tool call that waits for it. @default none */
  parentSession?: { sessionId: string; toolCallId: string; depth: number } | null;
  /** The sub-agent sessions this one started, with their agents, by session ID. @default none */
  childSessions?: { sessionId: string; agent: string }[];
}

/** One session forked from the inspected one. */
export interface InspectedFork {
  sessionId: string;
  /** The fork continues after this turn of the inspected session (0: before its first). */
  throughTurn: number;
  /** ISO 8601 time of the fork. */
  forkedAt: string;
}

/**
 * The forks of a session. The engine keeps no index of forks by source
 * (a fork never writes to its source), so the inspector reads the lineage of
 * the sessions of the same agent created since the source, up to
 * `inspectedForkScanLimit` of them; `complete` says whether it saw them all.
 */
export interface InspectedForks {
  /** Oldest fork first. */
  sessions: InspectedFork[];
  /** Sessions whose lineage was read. */
  scanned: number;
  /** False when more sessions were created since the source than the inspector reads. */
  complete: boolean;
}

/** How many sessions created since the inspected one the inspector reads to find its forks. */
export const inspectedForkScanLimit = 500;

/**
 * The SSE event type of the frame that says when events were written: its
 * data maps event IDs to ISO 8601 times. The events route sends it when asked.
 */
export const agentEventWriteTimesEventName = "perdure-write-times";
