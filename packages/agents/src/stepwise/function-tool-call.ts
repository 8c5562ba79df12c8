/**
 * One call of a Stepwise function tool, run from the runner contract's
 * `DeferredToolExecution`: the arguments are checked, the tool's context is
 * built, and its result becomes the contract's outcome. The Stepwise runner
 * runs its tools with it, and so does an adapter that offers `agentTool`s
 * to its framework's model ({@link AgentToolSet}).
 */
import type {
  AgentTurnContext,
  DeferredToolCall,
  DeferredToolExecution,
  DeferredToolOutcome,
  ToolInputRequested,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
  ToolTaskStarted,
} from "../contract/agent-framework-runner.ts";
import { pythonJsonDumps } from "../contract/python-json.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import { missingToolTaskPoller } from "../contract/values/result-texts.ts";
import type { FunctionTool, ToolCallContext } from "./function-tool.ts";
import { parseFunctionToolArguments } from "./function-tool-arguments.ts";

function isToolInputRequested(value: unknown): value is ToolInputRequested {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "tool_input_requested";
}

/** Runs `tool` for `call`: a string result is the output, anything else is sent as JSON. */
export async function executeFunctionToolCall(tool: FunctionTool, call: DeferredToolExecution): Promise<DeferredToolOutcome> {
  const parsed = await parseFunctionToolArguments(tool, call.toolCall.arguments);
  if (!parsed.ok) throw new ToolExecutionError(parsed.message);
  const context: ToolCallContext = {
    flowId: call.flowId,
    turnId: call.toolCall.turnId,
    toolCallId: call.toolCall.toolCallId,
    idempotencyKey: call.idempotencyKey,
    attempt: call.attempt,
    events: call.events,
    heartbeat: call.heartbeat,
    heartbeatCheckpoint: call.heartbeatCheckpoint,
    saveHeartbeatCheckpoint: call.saveHeartbeatCheckpoint,
    signal: call.cancellationSignal,
    deadline: call.deadline,
    inputAnswers: call.inputAnswers ?? [],
    inputContinuation: call.toolCall.inputContinuation,
  };
  const result = await tool.execute(parsed.value, context);
  if (isToolInputRequested(result)) return result;
  if ((result as { kind?: unknown } | null)?.kind === "tool_task_started") {
    if (tool.pollTask === undefined) throw new ToolExecutionError(missingToolTaskPoller);
    return result as ToolTaskStarted;
  }
  return { output: typeof result === "string" ? result : pythonJsonDumps(result ?? null) };
}

/**
 * `agentTool`s offered to the model of a framework adapter: the adapter
 * lists them to the model as schemas, hands their calls to
 * `deferredToolCall`, and forwards the runner's `executeDeferredToolCall`,
 * `pollToolTask` and `cancelToolTask` for them here. Each call then starts
 * and follows a durable child session, as in a Stepwise agent, and counts
 * toward the session's `maxSubAgentsPerTurn`.
 *
 * @example
 * // In an adapter's runner:
 * this.agentTools = new AgentToolSet(options.agentTools, agent.name);
 * // runModelStep: offer this.agentTools.list as schemas; a call of one becomes this.agentTools.deferredToolCall(turn, call)
 * // executeDeferredToolCall, pollToolTask, cancelToolTask: forward the calls of this.agentTools.has(name) here
 */
export class AgentToolSet {
  private readonly tools: ReadonlyMap<string, FunctionTool>;

  /** `owner` names the agent in errors. Every tool must come from `agentTool`, each name once. */
  constructor(tools: readonly FunctionTool[] | undefined, owner: string) {
    const byName = new Map<string, FunctionTool>();
    for (const tool of tools ?? []) {
      if (tool?.kind !== "function_tool" || tool.startsSubAgent !== true) {
        throw new TypeError(`agentTools of agent ${owner}: ${JSON.stringify((tool as { name?: unknown } | undefined)?.name ?? null)} is not an agentTool; pass what agentTool from @perdure/agents/stepwise returns`);
      }
      if (byName.has(tool.name)) throw new TypeError(`agentTools of agent ${owner}: two agentTools are named ${tool.name}`);
      byName.set(tool.name, tool);
    }
    this.tools = byName;
  }

  /** The agentTools, in the order given. */
  get list(): readonly FunctionTool[] {
    return [...this.tools.values()];
  }

  has(toolName: string): boolean {
    return this.tools.has(toolName);
  }

  /** The call as the session records it: the tool's effect under the session's policies, marked as starting a sub-agent. */
  deferredToolCall(turn: AgentTurnContext, call: { toolCallId: string; toolName: string; arguments: string }): DeferredToolCall {
    const tool = this.get(call.toolName);
    return { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, policy: turn.resolveToolPolicy(call.toolName, tool.effect), startsSubAgent: true };
  }

  executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    return executeFunctionToolCall(this.get(call.toolCall.toolName), call);
  }

  pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    const pollTask = this.get(poll.toolCall.toolName).pollTask;
    if (pollTask === undefined) throw new ToolExecutionError(missingToolTaskPoller);
    return pollTask(poll);
  }

  async cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    await this.tools.get(cancellation.toolCall.toolName)?.cancelTask?.(cancellation);
  }

  private get(toolName: string): FunctionTool {
    const tool = this.tools.get(toolName);
    if (tool === undefined) throw new ToolExecutionError(`unknown agentTool ${toolName}`);
    return tool;
  }
}
