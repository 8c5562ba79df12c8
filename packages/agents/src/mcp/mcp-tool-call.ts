/**
 * One `tools/call` on a new connection, and the contract's outcome table: a
 * result is the output; an `isError` result or an MCP error answer other
 * than `-32603` is a `ToolExecutionError`; a call never sent (every
 * connection attempt failed) is a `ToolExecutionError`; anything that
 * breaks after the request was sent is an `McpToolCallInterruptedError`.
 */
import { CallToolResultSchema, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import { describeError, McpConnectionFailedError, mcpErrorAnswerText, openMcpConnection, type McpConnection } from "./mcp-connection.ts";
import { mcpToolResultText } from "./mcp-result-text.ts";
import type { ResolvedMcpServerConfig } from "./mcp-server-config.ts";
import { McpToolCallInterruptedError } from "./mcp-tool-call-interrupted-error.ts";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ToolTaskStarted } from "../contract/agent-framework-runner.ts";
import { createMcpToolTask, runMcpToolTask, type McpTaskCall } from "./mcp-task-call.ts";
import type { ResolvedMcpToolSourceOptions } from "./mcp-tool-source-options.ts";

/** The `_meta` key of the session's idempotency key on every `tools/call`. */
export const mcpIdempotencyKeyMetaKey = "io.perdure/idempotencyKey";

/** The event type of an MCP `notifications/progress` on `AgentEvents`. */
export const mcpToolProgressEventType = "mcp.tool_progress";

/** What one call needs. */
export interface McpToolCallRequest {
  server: ResolvedMcpServerConfig;
  /** The tool's name on its server. */
  mcpToolName: string;
  argumentsValue: Record<string, unknown>;
  idempotencyKey: string;
  signal?: AbortSignal | undefined;
  /** The request times out here; without it, after `requestTimeoutMs`. */
  deadline?: Date | undefined;
  /** `"required"` calls the tool as a task, polled here. @default "forbidden" */
  taskSupport?: "forbidden" | "optional" | "required" | undefined;
  /** Sent after every task poll. */
  heartbeat?: (() => Promise<void>) | undefined;
  /**
   * When set, a task of a Streamable HTTP server without protocol sessions
   * is handed to the session's `PollToolTask`: the task ID is saved as the
   * heartbeat checkpoint and returned as `ToolTaskStarted`.
   */
  detachTask?: { ttlMs: number; saveCheckpoint: (taskId: string) => Promise<void> } | undefined;
  /** Where progress notifications go, with the call's agent tool identity. */
  progress?: { events: AgentEventWriter; toolCallId: string; toolName: string } | undefined;
}

function requestTimeoutMs(request: McpToolCallRequest, options: ResolvedMcpToolSourceOptions): number {
  if (request.deadline === undefined) return options.requestTimeoutMs;
  // A second before the Step's own deadline, so the Step records the interruption itself.
  return Math.max(1_000, request.deadline.getTime() - Date.now() - 1_000);
}

/** The progress token of a call; each connection carries one call. */
const progressToken = "perdure-progress";

interface ProgressParams { progress: number; total?: number; message?: string }

/**
 * Watches the connection, in the order messages arrive: JSON-RPC error
 * answers, progress notifications of the call, and a broken Streamable HTTP
 * stream. Progress is read here rather than through the SDK's `onprogress`,
 * which drops notifications that arrive in the same chunk as the result.
 */
function watchConnection(connection: McpConnection, onProgress: ((params: ProgressParams) => void) | undefined): { errorAnswer: () => { code: number; message: string } | undefined; broken: Promise<never>; stop: () => void } {
  let errorAnswer: { code: number; message: string } | undefined;
  let rejectBroken!: (error: Error) => void;
  const broken = new Promise<never>((_resolve, reject) => { rejectBroken = reject; });
  broken.catch(() => undefined);
  const { transport, client } = connection;
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const typed = message as { id?: unknown; method?: unknown; params?: { progressToken?: unknown } & Partial<ProgressParams>; error?: { code?: unknown; message?: unknown } };
    if (typed.method === "notifications/progress" && typed.params?.progressToken === progressToken && typeof typed.params.progress === "number") {
      onProgress?.({ progress: typed.params.progress, ...(typed.params.total === undefined ? {} : { total: typed.params.total }), ...(typed.params.message === undefined ? {} : { message: typed.params.message }) });
      return;
    }
    if ("id" in message && typed.error !== undefined) errorAnswer = { code: Number(typed.error.code), message: String(typed.error.message) };
    onmessage?.(message, extra);
  };
  client.onerror = (error) => {
    // The SDK reports a broken response stream here and keeps the request waiting; end it at once.
    if (/SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect/.test(error.message)) rejectBroken(error);
  };
  return { errorAnswer: () => errorAnswer, broken, stop: () => { client.onerror = () => undefined; } };
}

/** Whether tasks of this connection outlive it: a Streamable HTTP server that issued no protocol session. */
function keepsTasksAcrossConnections(connection: McpConnection): boolean {
  return connection.transport instanceof StreamableHTTPClientTransport && connection.transport.sessionId === undefined;
}

/** Calls the tool and returns its output text (or its detached task), or throws as the outcome table says. */
export async function callMcpTool(request: McpToolCallRequest, options: ResolvedMcpToolSourceOptions): Promise<string | ToolTaskStarted> {
  const { server, mcpToolName } = request;
  let connection: McpConnection;
  try {
    connection = await openMcpConnection(server, { ...options, signal: request.signal });
  } catch (error) {
    if (error instanceof McpConnectionFailedError) throw new ToolExecutionError(`the MCP tool ${mcpToolName} was not called: ${error.message}`, { cause: error });
    throw error;
  }
  const progress = request.progress;
  // Progress events are written in order, and all of them before the call returns: a Stream drops writes after the Step's handler returns.
  let progressWrites: Promise<void> = Promise.resolve();
  const onProgress = progress === undefined ? undefined : (notification: ProgressParams): void => {
    const payload = {
      tool_call_id: progress.toolCallId,
      tool_name: progress.toolName,
      server: server.name,
      progress: notification.progress,
      total: notification.total ?? null,
      message: notification.message ?? null,
    };
    progressWrites = progressWrites.then(() => progress.events.write(mcpToolProgressEventType, payload)).catch(() => undefined);
  };
  const watch = watchConnection(connection, onProgress);
  try {
    const meta: Record<string, unknown> = { [mcpIdempotencyKeyMetaKey]: request.idempotencyKey, ...(progress === undefined ? {} : { progressToken }) };
    const params = { name: mcpToolName, arguments: request.argumentsValue, _meta: meta };
    const taskCall: McpTaskCall = {
      serverName: server.name, mcpToolName, params, taskWaitTimeoutMs: options.taskWaitTimeoutMs, requestTimeoutMs: options.requestTimeoutMs,
      signal: request.signal, heartbeat: request.heartbeat,
    };
    if (request.taskSupport === "required" && request.detachTask !== undefined && keepsTasksAcrossConnections(connection)) {
      const created = await Promise.race([createMcpToolTask(connection.client, taskCall, request.detachTask.ttlMs), watch.broken]);
      // Saved before anything else, so a retried attempt resumes this task instead of calling the tool again.
      await request.detachTask.saveCheckpoint(created.taskId);
      return { kind: "tool_task_started", taskId: created.taskId, pollIntervalSeconds: Math.max(1, Math.ceil((created.pollIntervalMs ?? 1_000) / 1_000)) };
    }
    const call = request.taskSupport === "required"
      ? runMcpToolTask(connection.client, taskCall)
      : connection.client.callTool(params, CallToolResultSchema, {
        timeout: requestTimeoutMs(request, options),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    const result = (await Promise.race([call, watch.broken])) as { content?: unknown; structuredContent?: unknown; isError?: unknown };
    const text = mcpToolResultText(result);
    if (result.isError === true) throw new ToolExecutionError(text);
    return text;
  } catch (error) {
    if (ToolExecutionError.isInstance(error) || McpToolCallInterruptedError.isInstance(error)) throw error;
    const answer = watch.errorAnswer();
    if (answer !== undefined && answer.code !== (ErrorCode.InternalError as number)) throw new ToolExecutionError(mcpErrorAnswerText(answer.message), { cause: error });
    throw new McpToolCallInterruptedError(server.name, mcpToolName, describeError(error), { cause: error });
  } finally {
    await progressWrites;
    watch.stop();
    await connection.close();
  }
}
