// Typed calls to the `perdure dev` HTTP API (packages/cli/src/server/create-dev-app.ts).
// The answers' shapes are the server's own (@perdure/agents/contract/ui-stream),
// under the names the components use.
import type {
  AgentInterruptWire as WireInterrupt,
  AgentSessionFeatures as AgentFeatures,
  AgentSnapshotWire as WireSnapshot,
  AgentStateWire as WireAgentState,
  AgentToolCallWire as WireToolCall,
  AgentUsageWire as WireUsage,
  ContextSummaryWire as WireContextSummary,
  InspectedMessageStorage as MessageStorage,
  ListedSession as SessionSummary,
  SessionInspection,
  StoredMessageWire as WireStoredMessage,
  TimelineAttempt,
  TimelineExecution,
  WaitingMessageWire as WireQueuedMessage,
} from "@perdure/agents/contract/ui-stream";
import type { UIMessage } from "ai";

export { agentEventWriteTimesEventName } from "@perdure/agents/contract/ui-stream";
export type {
  AgentFeatures,
  MessageStorage,
  SessionInspection,
  SessionSummary,
  TimelineAttempt,
  TimelineExecution,
  WireAgentState,
  WireContextSummary,
  WireInterrupt,
  WireQueuedMessage,
  WireSnapshot,
  WireStoredMessage,
  WireToolCall,
  WireUsage,
};

/** `GET /api/chat/:id`. */
export interface ChatSnapshot {
  messages: UIMessage[];
  resumeToken: string | null;
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
