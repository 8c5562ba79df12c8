/**
 * The data parts of the MCP events: a tool's progress
 * (`mcp.tool_progress`, from `notifications/progress`) and a long-running
 * MCP task's status (`mcp.task_status`). Each has the tool call ID as its
 * `id`, so the AI SDK client replaces the previous progress or status of
 * that call instead of adding another part, and a replayed turn rebuilds
 * the same parts. Events only: snapshots and stored messages have none.
 * docs/decisions/2026-12-03-mcp-events-in-ui-streams.md
 */

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

function stringOf(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function finiteNumberOf(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The progress part of an `mcp.tool_progress` payload written by `attempt`, or undefined when it lacks its call ID or a numeric progress. */
export function mcpToolProgressChunkFromPayload(payload: Record<string, unknown>, attempt: number): AgentMcpToolProgressChunk | undefined {
  const toolCallId = stringOf(payload.tool_call_id);
  const progress = finiteNumberOf(payload.progress);
  if (toolCallId === null || progress === null) return undefined;
  return {
    type: "data-agent-mcp-tool-progress",
    id: toolCallId,
    data: {
      toolCallId,
      toolName: stringOf(payload.tool_name) ?? "",
      server: stringOf(payload.server) ?? "",
      progress,
      attempt,
      total: finiteNumberOf(payload.total),
      message: stringOf(payload.message),
    },
  };
}

/** The status part of an `mcp.task_status` payload, or undefined when it lacks its call ID, task ID or status. */
export function mcpTaskStatusChunkFromPayload(payload: Record<string, unknown>): AgentMcpTaskStatusChunk | undefined {
  const toolCallId = stringOf(payload.tool_call_id);
  const taskId = stringOf(payload.task_id);
  const status = stringOf(payload.status);
  if (toolCallId === null || taskId === null || status === null) return undefined;
  return {
    type: "data-agent-mcp-task-status",
    id: toolCallId,
    data: { toolCallId, toolName: stringOf(payload.tool_name) ?? "", server: stringOf(payload.server) ?? "", taskId, status, statusMessage: stringOf(payload.status_message) },
  };
}
