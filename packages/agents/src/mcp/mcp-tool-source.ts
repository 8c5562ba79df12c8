/**
 * `McpToolSource`: the tools of MCP servers configured on the Worker, as a
 * Stepwise `ToolSource` and for any other runner. Every call runs in its own
 * tool Step, on a new connection, with an effect from the tool's annotations.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type {
  AgentTurnContext,
  DeferredToolCall,
  DeferredToolExecution,
  ToolExecutionResult,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
  ToolTaskStarted,
} from "../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { JsonSchema } from "../stepwise/model-client.ts";
import type { ListedTool, ToolSource, ToolSourceCallRequest, ToolSourceExecution } from "../stepwise/tool-source.ts";
import { defaultRequiresApproval, type ToolEffect, type ToolPolicy } from "../contract/values/tool-effect.ts";
import {
  isMcpResourceAndPromptToolName,
  mcpResourceAndPromptToolDefinitions,
  mcpResourceAndPromptToolNames,
  runMcpResourceAndPromptTool,
  type McpResourceAndPromptToolName,
} from "./mcp-resource-and-prompt-tools.ts";
import { resolveMcpServerConfigs, type McpServerConfig, type ResolvedMcpServerConfig } from "./mcp-server-config.ts";
import { McpServerListing } from "./mcp-server-listing.ts";
import { callMcpTool } from "./mcp-tool-call.ts";
import { cancelMcpTask, pollMcpTask, readMcpTaskContinuation } from "./mcp-task-polling.ts";
import { annotatedMcpToolEffect, type McpToolAnnotations } from "./mcp-tool-effects.ts";
import { mcpAgentToolName } from "./mcp-tool-names.ts";
import { resolveMcpToolSourceOptions, type McpToolSourceOptions, type ResolvedMcpToolSourceOptions } from "./mcp-tool-source-options.ts";

/** An MCP tool as offered to the model. */
export interface McpTool extends ListedTool {
  /** `<server>__<tool>`, the name the model calls and tool policies use. */
  name: string;
  description: string;
  /** The tool's JSON Schema, as its server listed it (also `parameters`). */
  inputSchema: JsonSchema;
  parameters: JsonSchema;
  /** The configured server; null for the resource and prompt tools. */
  serverName: string | null;
  /** The tool's name on its server. */
  mcpToolName: string;
  annotations: McpToolAnnotations | null;
  taskSupport: "forbidden" | "optional" | "required";
  /** From the annotations when the server is trusted; undefined leaves it to the session's default. */
  effect?: ToolEffect;
}

/** The reference stored on a call's record, so the tool Step reaches the server without a listing. */
type McpCallReference =
  | { server: string; tool: string; task_support: McpTool["taskSupport"] }
  | { resource_tool: McpResourceAndPromptToolName };

/** What `deferredToolCall` takes on the runner-agnostic path. */
export interface McpModelToolCall {
  toolCallId: string;
  toolName: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/** Options of `callTool`, the framework adapter path. */
export interface McpCallToolOptions {
  /** The session's key, `<flowId>/<turnId>/<toolCallId>`, sent in `_meta`. */
  idempotencyKey: string;
  signal?: AbortSignal;
  /** The request times out here. @default requestTimeoutMs from now */
  deadline?: Date;
}

export type McpDeferredToolHandler = (call: DeferredToolExecution) => Promise<ToolExecutionResult>;

function parseArguments(text: string, toolName: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new ToolExecutionError(`the arguments of ${toolName} are not JSON: ${text.slice(0, 200)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ToolExecutionError(`the arguments of ${toolName} must be a JSON object, got ${text.slice(0, 200)}`);
  return value as Record<string, unknown>;
}

function readReference(value: unknown): McpCallReference | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const object = value as Record<string, unknown>;
  if (typeof object.resource_tool === "string" && isMcpResourceAndPromptToolName(object.resource_tool)) return { resource_tool: object.resource_tool };
  if (typeof object.server === "string" && typeof object.tool === "string") {
    const taskSupport = object.task_support === "optional" || object.task_support === "required" ? object.task_support : "forbidden";
    return { server: object.server, tool: object.tool, task_support: taskSupport };
  }
  return undefined;
}

/** Reads the stored text of either path: the Stepwise wrapper or this source's own reference. */
function referenceFromStoredText(text: string | undefined): McpCallReference | undefined {
  if (text === undefined) return undefined;
  try {
    const stored = JSON.parse(text) as Record<string, unknown>;
    return readReference("stepwise_tool_source" in stored ? stored.reference : stored);
  } catch {
    return undefined;
  }
}

/**
 * The tools of MCP servers as agent tools.
 *
 * @example
 * const tools = new McpToolSource([
 *   { transport: "stdio", name: "files", command: "mcp-server-files", args: ["/srv/reports"] },
 *   { transport: "streamable_http", name: "tickets", url: "https://tickets.example.com/mcp" },
 * ]);
 * const flow = createStepwiseAgentSessionFlow({ name: "reports", instructions: "...", model, toolSources: [tools] }, "ReportsAgent");
 */
export class McpToolSource implements ToolSource {
  readonly sourceName: string;
  private readonly options: ResolvedMcpToolSourceOptions;
  private readonly servers: ReadonlyMap<string, ResolvedMcpServerConfig>;
  private readonly listings: McpServerListing[];
  private readonly warned = new Set<string>();
  private assembled: McpTool[] = [];

  constructor(servers: readonly McpServerConfig[], options: McpToolSourceOptions = {}, clock: { now: () => number } = Date) {
    this.options = resolveMcpToolSourceOptions(options);
    this.sourceName = this.options.sourceName;
    const resolved = resolveMcpServerConfigs(servers);
    this.servers = new Map(resolved.map((server) => [server.name, server]));
    this.listings = resolved.map((server) => new McpServerListing(server, this.options, () => clock.now()));
    this.assembled = this.assemble();
  }

  /** How many listings each server has started, by server name (diagnostics and tests). */
  listingCounts(): Record<string, number> {
    return Object.fromEntries(this.listings.map((listing) => [listing.server.name, listing.listingCount]));
  }

  /**
   * Every server's tools, cached per Worker, then the resource and prompt
   * tools when enabled. `refresh: true` lists every server again now.
   */
  async listTools(options: { refresh?: boolean; signal?: AbortSignal } = {}): Promise<McpTool[]> {
    const work = Promise.all(this.listings.map((listing) => listing.current(options.refresh === true)));
    const { signal } = options;
    if (signal !== undefined) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason as Error);
        signal.addEventListener("abort", onAbort, { once: true });
        work.then(() => { signal.removeEventListener("abort", onAbort); resolve(); }, reject);
      });
    } else {
      await work;
    }
    this.assembled = this.assemble();
    return [...this.assembled];
  }

  /** The last listing, without I/O. */
  cachedTools(): McpTool[] {
    return [...this.assembled];
  }

  /** The resource and prompt tools, which this source always lists when they are enabled. */
  declaredToolNames(): readonly string[] {
    return this.options.resourceAndPromptToolsEnabled && this.servers.size > 0 ? [...mcpResourceAndPromptToolNames] : [];
  }

  /** The policy of every listed tool, by name: its effect and the approval its effect asks for by default. */
  toolPolicies(): Record<string, ToolPolicy> {
    const policies: Record<string, ToolPolicy> = {};
    for (const tool of this.assembled) {
      if (tool.effect !== undefined) policies[tool.name] = { effect: tool.effect, requiresApproval: defaultRequiresApproval(tool.effect) };
    }
    return policies;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.onWarning(message);
  }

  private toMcpTool(server: ResolvedMcpServerConfig, tool: Tool): McpTool {
    const annotations = (tool.annotations ?? null) as McpToolAnnotations | null;
    const effect = server.trustsToolAnnotations ? annotatedMcpToolEffect(annotations ?? undefined) : undefined;
    const schema = tool.inputSchema as JsonSchema;
    return {
      name: mcpAgentToolName(server.name, tool.name),
      description: tool.description ?? "",
      inputSchema: schema,
      parameters: schema,
      serverName: server.name,
      mcpToolName: tool.name,
      annotations,
      taskSupport: tool.execution?.taskSupport ?? "forbidden",
      ...(effect === undefined ? {} : { effect }),
    };
  }

  /** The offered tools in server order; the first of two with one name wins. */
  private assemble(): McpTool[] {
    const tools: McpTool[] = [];
    const byName = new Map<string, McpTool>();
    const offer = (tool: McpTool): void => {
      const earlier = byName.get(tool.name);
      if (earlier !== undefined) {
        this.warnOnce(`clash:${tool.name}:${tool.serverName ?? ""}:${tool.mcpToolName}`,
          `MCP tool ${tool.mcpToolName} of server ${tool.serverName ?? "(resource and prompt tools)"} is left out: its name ${tool.name} is taken by tool ${earlier.mcpToolName} of server ${earlier.serverName ?? "(resource and prompt tools)"}`);
        return;
      }
      byName.set(tool.name, tool);
      tools.push(tool);
    };
    for (const listing of this.listings) {
      for (const tool of listing.cached()) {
        offer(this.toMcpTool(listing.server, tool));
      }
    }
    for (const definition of this.declaredToolNames().length > 0 ? mcpResourceAndPromptToolDefinitions([...this.servers.keys()]) : []) {
      offer({ ...definition, inputSchema: definition.parameters, serverName: null, mcpToolName: definition.name, annotations: { readOnlyHint: true }, taskSupport: "forbidden", effect: "read" });
    }
    return tools;
  }

  private referenceOf(tool: McpTool): McpCallReference {
    return tool.serverName === null ? { resource_tool: tool.mcpToolName as McpResourceAndPromptToolName } : { server: tool.serverName, tool: tool.mcpToolName, task_support: tool.taskSupport };
  }

  /**
   * Defers a model's call of a listed tool. With a Stepwise
   * `ToolSourceCallRequest`, returns the call and its reference; with a turn
   * and a call (another runner), looks the tool up in the last listing and
   * returns the `DeferredToolCall` with its `toolSourceReference`.
   */
  deferredToolCall(request: ToolSourceCallRequest): Omit<DeferredToolCall, "toolSourceReference"> & { reference?: unknown };
  deferredToolCall(turn: AgentTurnContext, call: McpModelToolCall): DeferredToolCall;
  deferredToolCall(first: ToolSourceCallRequest | AgentTurnContext, call?: McpModelToolCall): (Omit<DeferredToolCall, "toolSourceReference"> & { reference?: unknown }) | DeferredToolCall {
    if (call === undefined) {
      const request = first as ToolSourceCallRequest;
      const listed = request.listedTool as Partial<McpTool>;
      const tool = this.assembled.find((candidate) => candidate.name === request.toolName && candidate.mcpToolName === listed.mcpToolName && candidate.serverName === listed.serverName)
        ?? (listed.mcpToolName !== undefined && listed.serverName !== undefined ? (listed as McpTool) : undefined);
      if (tool === undefined) throw new TypeError(`tool ${request.toolName} was not listed by tool source ${this.sourceName}`);
      return {
        toolCallId: request.toolCallId, toolName: request.toolName, arguments: request.arguments,
        policy: request.resolveToolPolicy(request.toolName, tool.effect === undefined ? undefined : { effect: tool.effect }),
        reference: this.referenceOf(tool),
      };
    }
    const turn = first as AgentTurnContext;
    const tool = this.assembled.find((candidate) => candidate.name === call.toolName);
    if (tool === undefined) {
      // A name no listing offered never reaches a server.
      return { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, policy: { effect: "unclassified", requiresApproval: false } };
    }
    return {
      toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments,
      policy: turn.resolveToolPolicy(call.toolName, tool.effect === undefined ? undefined : { effect: tool.effect }),
      toolSourceReference: JSON.stringify(this.referenceOf(tool)),
    };
  }

  /**
   * Runs a deferred call in its tool Step, from the reference stored on its
   * record. When the runner polls tool tasks (`supportsToolTasks`), a task of
   * a Streamable HTTP server without protocol sessions comes back as
   * `ToolTaskStarted`, its ID saved as the heartbeat checkpoint first; every
   * other task is polled here.
   */
  async executeDeferredToolCall(execution: ToolSourceExecution | DeferredToolExecution): Promise<ToolExecutionResult | ToolTaskStarted> {
    const reference = this.referenceOfExecution(execution);
    if (reference === undefined) throw new ToolExecutionError(`unknown tool ${execution.toolCall.toolName}`);
    const detaches = execution.supportsToolTasks === true && "server" in reference && reference.task_support === "required"
      && this.servers.get(reference.server)?.transport === "streamable_http";
    if (detaches && execution.heartbeatCheckpoint !== undefined && execution.heartbeatCheckpoint !== "") {
      // An earlier attempt created the task and saved its ID: resume it instead of calling the tool again.
      return { kind: "tool_task_started", taskId: execution.heartbeatCheckpoint, pollIntervalSeconds: 1 };
    }
    return this.run(reference, execution.toolCall.toolName, execution.toolCall.arguments, {
      idempotencyKey: execution.idempotencyKey,
      signal: execution.cancellationSignal,
      deadline: execution.deadline,
      progress: { events: execution.events, toolCallId: execution.toolCall.toolCallId, toolName: execution.toolCall.toolName },
      heartbeat: execution.heartbeat,
      ...(detaches ? { detachTask: { ttlMs: this.options.taskTtlMs, saveCheckpoint: execution.saveHeartbeatCheckpoint } } : {}),
    });
  }

  private referenceOfExecution(execution: { reference?: unknown; toolCall: { toolSourceReference?: string | undefined } }): McpCallReference | undefined {
    return "reference" in execution ? readReference(execution.reference) : referenceFromStoredText(execution.toolCall.toolSourceReference);
  }

  private taskServer(reference: McpCallReference | undefined, toolName: string): { server: ResolvedMcpServerConfig; tool: string } {
    if (reference === undefined || !("server" in reference)) throw new ToolExecutionError(`tool ${toolName} has no MCP task to follow`);
    const server = this.servers.get(reference.server);
    if (server === undefined) throw new ToolExecutionError(`the MCP task of tool ${reference.tool} cannot be followed: MCP server ${reference.server} is not configured on this Worker`);
    return { server, tool: reference.tool };
  }

  /** Polls a task `executeDeferredToolCall` handed to `PollToolTask`; forward your runner's `pollToolTask` here. */
  async pollToolTask(poll: ToolTaskPoll & { reference?: unknown }): Promise<ToolTaskPollOutcome> {
    const { server, tool } = this.taskServer(this.referenceOfExecution(poll), poll.toolCall.toolName);
    return pollMcpTask({
      server, mcpToolName: tool, taskId: poll.toolCall.taskId ?? "", toolCallId: poll.toolCall.toolCallId, toolName: poll.toolCall.toolName,
      previousStatus: readMcpTaskContinuation(poll.toolCall.inputContinuation), previousIntervalSeconds: poll.toolCall.taskPollIntervalSeconds ?? 1,
      events: poll.events, signal: poll.cancellationSignal,
    }, this.options);
  }

  /** Sends `tasks/cancel` for an abandoned task; forward your runner's `cancelToolTask` here. */
  async cancelToolTask(cancellation: ToolTaskCancellation & { reference?: unknown }): Promise<void> {
    const { server } = this.taskServer(this.referenceOfExecution(cancellation), cancellation.toolCall.toolName);
    if (cancellation.toolCall.taskId === undefined) return;
    await cancelMcpTask(server, cancellation.toolCall.taskId, cancellation.cancellationSignal, this.options);
  }

  /** Handlers by tool name for another runner's `executeDeferredToolCall`, from the current listing. */
  async deferredToolHandlers(): Promise<Record<string, McpDeferredToolHandler>> {
    const tools = await this.listTools();
    // Handlers poll every task inside the tool Step, so they always return an output.
    const handler: McpDeferredToolHandler = async (call) => (await this.executeDeferredToolCall({ ...call, supportsToolTasks: false })) as ToolExecutionResult;
    return Object.fromEntries(tools.map((tool) => [tool.name, handler]));
  }

  /**
   * Calls a listed tool by its agent name and returns its output text: the
   * framework adapter path. Finds the server through the listing.
   */
  async callTool(toolName: string, input: Record<string, unknown>, options: McpCallToolOptions): Promise<string> {
    const tool = (await this.listTools()).find((candidate) => candidate.name === toolName);
    if (tool === undefined) throw new ToolExecutionError(`unknown tool ${toolName}`);
    const result = await this.run(this.referenceOf(tool), toolName, JSON.stringify(input ?? {}), {
      idempotencyKey: options.idempotencyKey, signal: options.signal, deadline: options.deadline, progress: undefined,
    });
    return (result as ToolExecutionResult).output;
  }

  private async run(
    reference: McpCallReference,
    toolName: string,
    argumentsText: string,
    call: {
      idempotencyKey: string; signal: AbortSignal | undefined; deadline: Date | undefined; progress: Parameters<typeof callMcpTool>[0]["progress"];
      heartbeat?: () => Promise<void>; detachTask?: Parameters<typeof callMcpTool>[0]["detachTask"];
    },
  ): Promise<ToolExecutionResult | ToolTaskStarted> {
    const argumentsValue = parseArguments(argumentsText, toolName);
    if ("resource_tool" in reference) {
      return { output: await runMcpResourceAndPromptTool(reference.resource_tool, argumentsValue, this.servers, this.options, call.signal) };
    }
    const server = this.servers.get(reference.server);
    if (server === undefined) throw new ToolExecutionError(`the MCP tool ${reference.tool} was not called: MCP server ${reference.server} is not configured on this Worker`);
    const output = await callMcpTool({
      server, mcpToolName: reference.tool, argumentsValue, idempotencyKey: call.idempotencyKey, signal: call.signal, deadline: call.deadline, progress: call.progress,
      taskSupport: reference.task_support, heartbeat: call.heartbeat, detachTask: call.detachTask,
    }, this.options);
    return typeof output === "string" ? { output } : output;
  }
}
