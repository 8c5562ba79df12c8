// Typed calls to the `perdure dev` HTTP API (packages/cli/src/server/create-dev-app.ts).
import type { UIMessage } from "ai";

/** One row of `GET /api/sessions`. */
export interface SessionSummary {
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

/** `GET /api/chat/:id`. */
export interface ChatSnapshot {
  messages: UIMessage[];
  resumeToken: string | null;
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
export interface WireAgentState {
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

export interface WireInterrupt {
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

export interface WireToolCall {
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
  /** The answers to a tool's own questions, oldest first. */
  input_answers?: { interrupt_id: string; resolution: string; answer: string | null }[];
}

export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  reasoning_tokens: number;
  cached_input_tokens: number;
  requests: number;
}

export interface WireQueuedMessage {
  message_id: string;
  text: string;
  plan_mode: boolean;
  sent_at: string;
}

export interface WireStoredMessage {
  sequence: number;
  role: string;
  text: string;
  turn_id?: string | null;
  created_at: string;
  tool_call_id?: string;
  tool_name?: string;
}

export interface WireSnapshot {
  state: WireAgentState | null;
  messages: WireStoredMessage[];
  pending_interrupts: WireInterrupt[];
  tool_calls: WireToolCall[];
  usage: WireUsage;
  queued_message_count: number;
  plan: unknown;
  queued_messages: WireQueuedMessage[];
  steered_messages: WireQueuedMessage[];
  context_summary: WireContextSummary | null;
  /** The settings the next turn starts with; absent from an older server. */
  session_settings?: Record<string, unknown>;
}

/** `ContextSummary`: what compaction summarized, through `last_sequence`. */
export interface WireContextSummary {
  summary: string;
  last_sequence: number;
  generation: number;
  turn_id: string;
  created_at: string;
}

/** `GET /api/sessions/:id/inspect`. */
export interface SessionInspection {
  flowId: string;
  flowType: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  activeExecutions: { executionId: string; stepType: string; status: string }[];
  timeline: TimelineExecution[];
  snapshot: WireSnapshot;
  /** What the session's agent accepts. */
  features?: AgentFeatures;
  /** Where the session's messages are; absent from an older server. */
  messageStorage?: MessageStorage;
  /** The session this one was forked from, and after how many of its turns; null (or absent from an older server) for no fork. */
  lineage?: { sourceSessionId: string; throughTurn: number; inheritedMessageCount: number; forkedAt: string } | null;
}

/** The `AgentMessages` window and the archive chunks of a session. */
export interface MessageStorage {
  hasIndex: boolean;
  windowFirstSequence: number;
  windowMessageCount: number;
  chunks: { firstSequence: number; lastSequence: number; messageCount: number; isOversized: boolean }[];
  deletedBeforeSequence: number | null;
}

/** What an agent accepts (`describeAgentSessionFeatures`). */
export interface AgentFeatures {
  planModeEnabled: boolean;
  builtInTools: string[];
  /** Names the agent accepts as `sessionSettings.model`, the default first; absent from an older server. */
  modelChoices?: string[];
}

/** An `AgentEvent` as wire JSON, with its payload parsed. */
export interface AgentEventWire {
  type: string;
  turn_id: string | null;
  attempt: number;
  step_execution_id: string;
  payload: Record<string, unknown>;
  /**
   * When the event was written (ISO 8601), from the stream's write-times
   * frame (not part of the event's wire JSON); null when the server did not say.
   */
  written_at: string | null;
}

/**
 * The SSE event type of the frame that says when events were written
 * (`agentEventWriteTimesEventName` of `@perdure/agents/ui-stream`, which the
 * events route opts into).
 */
export const agentEventWriteTimesEventName = "perdure-write-times";

/** The `[event id, ISO time]` pairs of a write-times frame; anything malformed is skipped. */
export function parseWriteTimes(data: string): [string, string][] {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return [];
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === "string" && !Number.isNaN(Date.parse(entry[1])));
}

/** An error the API answered, with its status. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, { ...init, headers: { accept: "application/json", ...(init?.body === undefined ? {} : { "content-type": "application/json" }), ...init?.headers } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { error?: unknown };
      if (typeof body.error === "string") message = body.error;
    } catch {
      // Not JSON: keep the status line.
    }
    throw new ApiError(response.status, message);
  }
  return (await response.json()) as T;
}

const sessionPath = (sessionId: string): string => encodeURIComponent(sessionId);

export const api = {
  agents: (): Promise<{ agents: string[]; features?: Record<string, AgentFeatures> }> => request("/api/agents"),
  sessions: (): Promise<{ sessions: SessionSummary[] }> => request("/api/sessions"),
  createSession: (agent?: string): Promise<{ sessionId: string; agent: string }> =>
    request("/api/sessions", { method: "POST", body: JSON.stringify(agent === undefined ? {} : { agent }) }),
  chat: (sessionId: string, signal?: AbortSignal): Promise<ChatSnapshot> =>
    request(`/api/chat/${sessionPath(sessionId)}`, signal === undefined ? {} : { signal }),
  inspect: (sessionId: string, signal?: AbortSignal): Promise<SessionInspection> =>
    request(`/api/sessions/${sessionPath(sessionId)}/inspect`, signal === undefined ? {} : { signal }),
  executePlan: (sessionId: string, revision: number): Promise<{ executed: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/plan/execute`, { method: "POST", body: JSON.stringify({ revision }) }),
  answerQuestion: (sessionId: string, interruptId: string, response: { answer: string } | { declined: true; reason?: string }): Promise<{ answered: true } | { answered: false; reason: string }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/questions/${encodeURIComponent(interruptId)}`, { method: "POST", body: JSON.stringify(response) }),
  /** Steers the running turn with a queued message (`messageId`) or new text. */
  steer: (sessionId: string, steering: { messageId: string } | { text: string; planMode?: boolean }): Promise<{ steered: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/steer`, { method: "POST", body: JSON.stringify(steering) }),
  deleteQueued: (sessionId: string, messageId: string): Promise<{ deleted: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/queue/delete`, { method: "POST", body: JSON.stringify({ messageId }) }),
  /** Stops the running turn (`cancel_turn`). */
  cancelTurn: (sessionId: string, turnId: string | null): Promise<{ cancelled: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/cancel`, { method: "POST", body: JSON.stringify({ turnId }) }),
  /** Replaces the session's settings (`update_session_settings`); its next turn starts with them. */
  updateSessionSettings: (sessionId: string, sessionSettings: Record<string, unknown>): Promise<{ updated: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/settings`, { method: "POST", body: JSON.stringify({ sessionSettings }) }),
  /** A new session holding this one after `throughTurn` turns, starting with `initialMessage` when given (edit and resend, retry). */
  forkSession: (sessionId: string, throughTurn: number, initialMessage?: string): Promise<{ sessionId: string; agent: string; created: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/fork`, { method: "POST", body: JSON.stringify(initialMessage === undefined ? { throughTurn } : { throughTurn, initialMessage }) }),
  stopSession: (sessionId: string): Promise<{ stopped: boolean }> =>
    request(`/api/sessions/${sessionPath(sessionId)}/stop`, { method: "POST", body: "{}" }),
  eventsUrl: (sessionId: string): string => `/api/sessions/${sessionPath(sessionId)}/events`,
  chatStreamUrl: (sessionId: string): string => `/api/chat/${sessionPath(sessionId)}/stream`,
};

/** Parses an SSE event's data into an AgentEvent; the payload may arrive as JSON text. `writtenAt` comes from the write-times frame. */
export function parseAgentEvent(data: string, writtenAt: string | null = null): AgentEventWire | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const object = value as Record<string, unknown>;
  let payload: unknown = object.payload;
  if (typeof payload === "string") {
    try {
      payload = JSON.parse(payload);
    } catch {
      payload = { text: payload };
    }
  }
  return {
    type: typeof object.type === "string" ? object.type : "unknown",
    turn_id: typeof object.turn_id === "string" ? object.turn_id : null,
    attempt: typeof object.attempt === "number" ? object.attempt : 1,
    step_execution_id: typeof object.step_execution_id === "string" || typeof object.step_execution_id === "number" ? String(object.step_execution_id) : "",
    payload: typeof payload === "object" && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {},
    written_at: writtenAt !== null && !Number.isNaN(Date.parse(writtenAt)) ? writtenAt : null,
  };
}
