/**
 * The data parts of the MCP events: a tool's progress
 * (`mcp.tool_progress`, from `notifications/progress`) and a long-running
 * MCP task's status (`mcp.task_status`). Each has the tool call ID as its
 * `id`, so the AI SDK client replaces the previous progress or status of
 * that call instead of adding another part, and a replayed turn rebuilds
 * the same parts. Events only: snapshots and stored messages have none.
 * docs/decisions/2026-12-03-mcp-events-in-ui-streams.md
 */
import type { AgentMcpTaskStatusChunk, AgentMcpToolProgressChunk } from "../contract/ui-stream/data-parts.ts";

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
