/**
 * A `taskSupport: "required"` tool called as a 2025-11-25 task and polled
 * inside the tool Step: `tools/call` with a task TTL of four times
 * `taskWaitTimeoutMs`, then `tasks/get` with a heartbeat per poll until the
 * task ends or `taskWaitTimeoutMs` passes; a completed or failed task's
 * result comes from `tasks/result`. A task that asks for input is cancelled
 * and fails, because its input requests need the live connection.
 */
import { setTimeout as delay } from "node:timers/promises";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import { McpToolCallInterruptedError } from "./mcp-tool-call-interrupted-error.ts";

/** What the task path needs besides the connection. */
export interface McpTaskCall {
  serverName: string;
  mcpToolName: string;
  params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };
  taskWaitTimeoutMs: number;
  requestTimeoutMs: number;
  signal: AbortSignal | undefined;
  heartbeat: (() => Promise<void>) | undefined;
}

/** The failure text of a task that asked for input. */
export function mcpTaskInputRequiredText(taskId: string, statusMessage: string | undefined): string {
  return `the MCP server asked for input that this agent session cannot provide yet (task ${taskId}${statusMessage === undefined ? "" : `: ${statusMessage}`})`;
}

const longestPollIntervalMs = 60_000;

/** Sends `tools/call` as a task with `ttlMs` and returns the created task. */
export async function createMcpToolTask(client: Client, call: McpTaskCall, ttlMs: number): Promise<{ taskId: string; pollIntervalMs: number | undefined }> {
  const signalOption = call.signal === undefined ? {} : { signal: call.signal };
  const created = await client.request({ method: "tools/call", params: call.params }, CreateTaskResultSchema, {
    task: { ttl: ttlMs }, timeout: call.requestTimeoutMs, ...signalOption,
  });
  return { taskId: created.task.taskId, pollIntervalMs: created.task.pollInterval };
}

/** Runs the task to its end on this connection and returns its `CallToolResult`. */
export async function runMcpToolTask(client: Client, call: McpTaskCall): Promise<{ content?: unknown; structuredContent?: unknown; isError?: unknown }> {
  const signalOption = call.signal === undefined ? {} : { signal: call.signal };
  const created = await createMcpToolTask(client, call, 4 * call.taskWaitTimeoutMs);
  const { taskId } = created;
  const waitUntil = Date.now() + call.taskWaitTimeoutMs;
  let pollIntervalMs = created.pollIntervalMs ?? 1_000;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId, { timeout: call.requestTimeoutMs, ...signalOption });
    await call.heartbeat?.();
    if (task.status === "completed" || task.status === "failed") {
      return client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: call.requestTimeoutMs, ...signalOption });
    }
    if (task.status === "cancelled") throw new ToolExecutionError(mcpTaskCancelledText(taskId, call.mcpToolName, task.statusMessage));
    if (task.status === "input_required") {
      await client.experimental.tasks.cancelTask(taskId, { timeout: call.requestTimeoutMs }).catch(() => undefined);
      throw new ToolExecutionError(mcpTaskInputRequiredText(taskId, task.statusMessage));
    }
    if (Date.now() >= waitUntil) {
      throw new McpToolCallInterruptedError(call.serverName, call.mcpToolName, `its task ${taskId} did not finish within taskWaitTimeoutMs (${call.taskWaitTimeoutMs} ms)`);
    }
    pollIntervalMs = Math.min(task.pollInterval ?? pollIntervalMs, longestPollIntervalMs);
    await delay(Math.min(pollIntervalMs, Math.max(0, waitUntil - Date.now())), undefined, signalOption);
  }
}

export function mcpTaskCancelledText(taskId: string, mcpToolName: string, statusMessage: string | undefined): string {
  return `the MCP task ${taskId} of tool ${mcpToolName} was cancelled by the server${statusMessage === undefined ? "" : `: ${statusMessage}`}`;
}
