/**
 * The data parts of an agent UI message stream: what the AI SDK has no part
 * for (questions and their resolutions, durable waits, the plan, tool tasks,
 * how a steered or stopped turn ended, MCP progress and task status). The
 * server builds them (`ui-stream/`) and a browser reads them; both use these
 * declarations. Each part has a stable `id`, so the AI SDK client replaces a
 * part it already holds instead of adding another.
 * docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md
 * docs/decisions/2026-12-03-turn-control-and-tool-tasks-in-ui-streams.md
 * docs/decisions/2026-12-03-mcp-events-in-ui-streams.md
 *
 * Browser-safe: types and constants only, no Node.js or engine imports.
 */
import type { AgentPlanStatus, AgentPlanTask } from "../values/agent-plan.ts";

/** What the browser sends back on a question part: an answer, or a decline. */
export type AgentQuestionResponseData =
  | { answer: string }
  | { declined: true; reason?: string };

/** A question the session waits for a person to answer (`ask_user`, or a tool's own question). */
export interface AgentQuestionData {
  /** The interrupt ID: the tool call ID for `ask_user`, `<toolCallId>-input-<n>` for a tool's question. */
  interruptId: string;
  toolCallId: string;
  /** `ask_user`, or the tool that asks. */
  toolName: string;
  question: string;
  /** The choices offered; empty when any text is the answer. */
  choices: string[];
  /** Whether an answer outside `choices` is accepted. */
  allowsFreeText: boolean;
  /** ISO 8601 time after which the question is no longer answered, or null. */
  deadline: string | null;
  /**
   * Set by the browser only: its answer or decline, sent back in the
   * assistant message through the approval route. The stream never sets it.
   */
  response?: AgentQuestionResponseData;
  /**
   * Set by the stream only, when the session refused the browser's answer
   * (blank, or outside the choices): why, for the person. The question is
   * still pending.
   */
  error?: string;
}

/**
 * How a question was resolved. `cancelled`: steering or `cancel_turn`
 * removed it. `no_longer_pending`: the browser answered a question that was
 * not pending any more and committed state does not say how it ended.
 */
export type AgentQuestionResolution = "answered" | "declined" | "deadline_passed" | "cancelled" | "no_longer_pending";

/** A question's end, in a part of its own beside the question. */
export interface AgentQuestionResolutionData {
  interruptId: string;
  toolCallId: string;
  resolution: AgentQuestionResolution;
  /** The decline's message the model sees, or `question deadline passed`; null otherwise. */
  rejectionMessage: string | null;
  /** `steered` or `turn_cancelled` for a cancelled question; null otherwise. */
  cancellationReason: string | null;
}

/** A `durable_wait` call's timer. */
export interface AgentTimerData {
  toolCallId: string;
  /** ISO 8601 time the wait ends. */
  waitUntil: string;
  reason: string;
}

/** The session's plan after a `plan_updated` event. */
export interface AgentPlanData {
  revision: number;
  status: AgentPlanStatus;
  taskCount: number;
  /** The plan's tasks when the committed plan still has this revision; null once a later one replaced it. */
  tasks: AgentPlanTask[] | null;
}

/** `data-agent-question`, with the interrupt ID as its `id`. */
export interface AgentQuestionChunk {
  type: "data-agent-question";
  id: string;
  data: AgentQuestionData;
}

/** `data-agent-question-resolution`, with the interrupt ID as its `id`. */
export interface AgentQuestionResolutionChunk {
  type: "data-agent-question-resolution";
  id: string;
  data: AgentQuestionResolutionData;
}

/** `data-agent-timer`, with the tool call ID as its `id`. */
export interface AgentTimerChunk {
  type: "data-agent-timer";
  id: string;
  data: AgentTimerData;
}

/** `data-agent-plan`, always with the `id` {@link agentPlanPartId}. */
export interface AgentPlanChunk {
  type: "data-agent-plan";
  id: string;
  data: AgentPlanData;
}

/** The data parts of an agent UI message stream; the same shapes are message parts. */
export type AgentDataChunk =
  | AgentQuestionChunk
  | AgentQuestionResolutionChunk
  | AgentTimerChunk
  | AgentPlanChunk
  | AgentToolTaskChunk
  | AgentTurnControlChunk
  | AgentMcpToolProgressChunk
  | AgentMcpTaskStatusChunk;

/** The `id` of every plan part, so a later revision replaces the earlier one in the message. */
export const agentPlanPartId = "agent-plan";

/**
 * Where a tool task stands: `running` while the session polls it,
 * `awaiting_answer` while its question waits for a person, then the call's
 * final status.
 */
export type AgentToolTaskStatus = "running" | "awaiting_answer" | "succeeded" | "failed" | "rejected" | "outcome_unknown";

/** A tool task and its latest status. */
export interface AgentToolTaskData {
  toolCallId: string;
  toolName: string;
  /** The task's handle (`ToolTaskStarted.taskId`). */
  taskId: string;
  status: AgentToolTaskStatus;
  /** Seconds between polls when known (snapshots carry it; the live stream does not), else null. */
  pollIntervalSeconds: number | null;
  /** `turn_cancelled` for a task the session abandoned because the turn was stopped; null otherwise. */
  cancellationReason: string | null;
}

/** `data-agent-tool-task`, with the tool call ID as its `id`. */
export interface AgentToolTaskChunk {
  type: "data-agent-tool-task";
  id: string;
  data: AgentToolTaskData;
}

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

/** The latest progress an MCP server reported for a running tool call. */
export interface AgentMcpToolProgressData {
  toolCallId: string;
  /** The agent's name of the tool (`<server>__<tool>`). */
  toolName: string;
  /** The MCP server's configured name. */
  server: string;
  /** The server's progress value; it grows with each notification of one attempt. */
  progress: number;
  /**
   * The tool Step's attempt that reported it (the event's `attempt`). A read
   * retried after a crash reports its progress again from the start; a
   * client shows the latest attempt's progress and ignores an older one's.
   */
  attempt: number;
  /** The total the progress counts towards, when the server gave one, else null. */
  total: number | null;
  message: string | null;
}

/** The latest status of a long-running MCP task, as the session's last poll saw it. */
export interface AgentMcpTaskStatusData {
  toolCallId: string;
  toolName: string;
  server: string;
  taskId: string;
  /** The MCP task status: `working`, `input_required`, `completed`, `failed` or `cancelled`. */
  status: string;
  statusMessage: string | null;
}

/** `data-agent-mcp-tool-progress`, with the tool call ID as its `id`. */
export interface AgentMcpToolProgressChunk {
  type: "data-agent-mcp-tool-progress";
  id: string;
  data: AgentMcpToolProgressData;
}

/** `data-agent-mcp-task-status`, with the tool call ID as its `id`. */
export interface AgentMcpTaskStatusChunk {
  type: "data-agent-mcp-task-status";
  id: string;
  data: AgentMcpTaskStatusData;
}
