/**
 * Tasks of Streamable HTTP servers without protocol sessions, polled by the
 * session's `PollToolTask`: one `tasks/get` per poll on a new connection, an
 * `mcp.task_status` event when the status changed, `tasks/result` for an
 * ended task; and `tasks/cancel` for an abandoned one.
 */
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ToolTaskPending, ToolTaskPollOutcome } from "../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import { isMcpErrorAnswer, withMcpConnection } from "./mcp-connection.ts";
import { mcpToolResultText } from "./mcp-result-text.ts";
import type { ResolvedMcpServerConfig } from "./mcp-server-config.ts";
import { mcpTaskCancelledText, mcpTaskInputRequiredText } from "./mcp-task-call.ts";
import type { ResolvedMcpToolSourceOptions } from "./mcp-tool-source-options.ts";

/** The event type of a task's status change on `AgentEvents`. */
export const mcpTaskStatusEventType = "mcp.task_status";

/** What one poll needs. */
export interface McpTaskPoll {
  server: ResolvedMcpServerConfig;
  mcpToolName: string;
  taskId: string;
  toolCallId: string;
  toolName: string;
  /** The status the previous poll saw, kept in the record's continuation. */
  previousStatus: string | null;
  previousIntervalSeconds: number;
  events: AgentEventWriter;
  signal: AbortSignal;
}

/** The next interval: the server's, rounded up, unless double the previous one (at most a minute) is longer. */
export function nextMcpTaskPollIntervalSeconds(serverIntervalMs: number | undefined, previousIntervalSeconds: number): number {
  const doubled = Math.min(2 * previousIntervalSeconds, 60);
  if (serverIntervalMs === undefined) return Math.max(1, doubled);
  const server = Math.max(1, Math.ceil(serverIntervalMs / 1_000));
  return server >= doubled ? server : doubled;
}

/** The continuation text that keeps the last seen status. */
export function mcpTaskContinuation(status: string): string {
  return JSON.stringify({ mcp_task_status: status });
}

export function readMcpTaskContinuation(text: string | undefined): string | null {
  if (text === undefined) return null;
  try {
    const status = (JSON.parse(text) as { mcp_task_status?: unknown }).mcp_task_status;
    return typeof status === "string" ? status : null;
  } catch {
    return null;
  }
}

/** Polls once. A server that cannot be reached or no longer knows the task throws, so the poll attempt fails. */
export async function pollMcpTask(poll: McpTaskPoll, options: ResolvedMcpToolSourceOptions): Promise<ToolTaskPollOutcome> {
  const timeout = options.requestTimeoutMs;
  return withMcpConnection(poll.server, { ...options, signal: poll.signal }, async ({ client }) => {
    const task = await client.experimental.tasks.getTask(poll.taskId, { timeout, signal: poll.signal });
    if (task.status !== poll.previousStatus) {
      await poll.events.write(mcpTaskStatusEventType, {
        tool_call_id: poll.toolCallId, tool_name: poll.toolName, server: poll.server.name, task_id: poll.taskId, status: task.status, status_message: task.statusMessage ?? null,
      });
    }
    if (task.status === "completed" || task.status === "failed") {
      const result = await client.experimental.tasks.getTaskResult(poll.taskId, CallToolResultSchema, { timeout, signal: poll.signal });
      const text = mcpToolResultText(result);
      if (result.isError === true) throw new ToolExecutionError(text);
      return { output: text };
    }
    if (task.status === "cancelled") throw new ToolExecutionError(mcpTaskCancelledText(poll.taskId, poll.mcpToolName, task.statusMessage));
    if (task.status === "input_required") {
      await client.experimental.tasks.cancelTask(poll.taskId, { timeout }).catch(() => undefined);
      throw new ToolExecutionError(mcpTaskInputRequiredText(poll.taskId, task.statusMessage));
    }
    const pending: ToolTaskPending = {
      kind: "tool_task_pending",
      pollIntervalSeconds: nextMcpTaskPollIntervalSeconds(task.pollInterval, poll.previousIntervalSeconds),
      continuation: mcpTaskContinuation(task.status),
    };
    return pending;
  });
}

/** Sends `tasks/cancel`; any answer from the server, an error answer included, ends the cancellation. */
export async function cancelMcpTask(server: ResolvedMcpServerConfig, taskId: string, signal: AbortSignal, options: ResolvedMcpToolSourceOptions): Promise<void> {
  await withMcpConnection(server, { ...options, signal }, async ({ client }) => {
    try {
      await client.experimental.tasks.cancelTask(taskId, { timeout: options.requestTimeoutMs, signal });
    } catch (error) {
      if (isMcpErrorAnswer(error)) return;
      throw error;
    }
  });
}
