/**
 * `OpenAiAgentsRunner`: an OpenAI Agents SDK `Agent` behind the session's
 * runner contract. The SDK's own run loop makes each model call; every tool
 * of the agent is wrapped so the loop stops at an approval interruption
 * before the tool runs. The interruption's serialized `RunState` is the
 * `frameworkRunState`, each call runs in its own tool Step, and the next
 * `RunModel` resumes the state with the recorded results.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Agent, RunContext, RunState, Runner, tool, type FunctionTool, type Model, type RunConfig, type RunToolApprovalItem, type Tool } from "@openai/agents";
import {
  emptyAgentUsage,
  outcomeUnknownToolResult,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type AgentUsage,
  type BuiltInToolDefinition,
  type DeferredToolCall,
  type DeferredToolExecution,
  type DeferredToolOutcome,
  type FrameworkMessage,
  type FrameworkToolPolicy,
  type RecordedModelReplay,
  type ToolTaskCancellation,
  type ToolTaskPoll,
  type ToolTaskPollOutcome,
} from "@perdure/agents";
import { AgentToolSet, type FunctionTool as PerdureFunctionTool, type JsonSchema } from "@perdure/agents/stepwise";
import { itemsOfMessages, messageOfItem, userItem } from "./openai-agents-items.ts";
import { modelCallScope, RecordedSdkModel, recordingModelProvider, type ModelCallScope } from "./openai-agents-model-calls.ts";

/** Options of {@link OpenAiAgentsRunner}. */
export interface OpenAiAgentsRunnerOptions {
  /**
   * The SDK's run configuration for every model call, such as `model`,
   * `modelProvider` or `modelSettings`. The SDK's own tracing is off unless
   * this turns it on (`tracingDisabled: false`): each `RunModel` would start
   * a trace of its own.
   * @default { tracingDisabled: true }
   */
  runConfig?: Partial<RunConfig>;
  /**
   * Sub-agents as durable child sessions: tools made by `agentTool` from
   * `@perdure/agents/stepwise`, offered to the model beside the agent's own
   * tools. Each call starts a child session and waits for its answer as a
   * tool task, as in a Stepwise agent. Use them instead of `asTool()`.
   * @default []
   */
  agentTools?: readonly PerdureFunctionTool[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, whatever its context and output type
type AnyAgent = Agent<any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any function tool
type AnyFunctionTool = FunctionTool<any, any, any>;

/**
 * What the SDK's default `errorFunction` returns in place of a tool's thrown
 * error. The SDK does not export it, and a tool test pins it.
 */
export const openAiAgentsDefaultToolErrorText = "An error occurred while running the tool. Please try again.";

/** The error of a call whose thrown error the SDK's default `errorFunction` replaced with its stock text. */
export function hiddenToolErrorMessage(toolName: string): string {
  return `tool ${toolName} threw, and the OpenAI Agents SDK's default errorFunction replaced the error with ${JSON.stringify(openAiAgentsDefaultToolErrorText)}; `
    + "pass errorFunction: null to tool() so the session sees the error itself";
}

/** The recorded outputs a resumed run gives the SDK for each call, by call ID. */
const recordedOutputs = new AsyncLocalStorage<ReadonlyMap<string, string>>();

function isFunctionTool(candidate: Tool): candidate is AnyFunctionTool {
  return candidate.type === "function";
}

/**
 * The tool as the model sees it, with the SDK told to stop for approval
 * before every call; when the run resumes, the tool "returns" what its tool
 * Step recorded instead of running.
 */
function deferredTool(original: AnyFunctionTool): AnyFunctionTool {
  return {
    ...original,
    needsApproval: async () => true,
    invoke: async (_context, _input, details) => {
      const callId = details?.toolCall?.callId;
      const output = callId === undefined ? undefined : recordedOutputs.getStore()?.get(callId);
      if (output === undefined) throw new Error(`tool ${original.name} call ${String(callId)} has no recorded result; the session runs every tool in its own Step`);
      return output;
    },
  };
}

/** A tool the session runs itself (a built-in tool or an agentTool), offered to the SDK as its schema. */
function schemaTool(definition: { name: string; description: string; parameters: JsonSchema | BuiltInToolDefinition["parameters"] }): AnyFunctionTool {
  return tool({
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters as never,
    strict: false,
    execute: () => {
      throw new Error(`tool ${definition.name} is run by the session`);
    },
  }) as AnyFunctionTool;
}

/**
 * Whether a function tool is another agent's `agent.asTool()`: the SDK's
 * public `AgentTool` type is a function tool with an `on` method for the
 * nested run's events, which `tool()` never adds.
 */
function isAgentAsTool(candidate: AnyFunctionTool): boolean {
  return typeof (candidate as { on?: unknown }).on === "function";
}

function checkAgent(agent: AnyAgent): void {
  if (agent.handoffs.length > 0) {
    throw new TypeError(`agent ${agent.name} has handoffs; a durable session runs one agent: make each other agent a session Flow of its own and pass agentTool from @perdure/agents/stepwise in this adapter's agentTools option, which runs it as a durable child session that answers this agent (see the package README's limits)`);
  }
  if (agent.mcpServers.length > 0) {
    throw new TypeError(`agent ${agent.name} has MCP servers, which the SDK calls inline in the model call; wrap an McpToolSource's tools as function tools instead (see the package README)`);
  }
  for (const candidate of agent.tools) {
    if (!isFunctionTool(candidate)) throw new TypeError(`agent ${agent.name} has the ${candidate.type} tool ${candidate.name}; only function tools can run in their own Steps`);
    if (isAgentAsTool(candidate)) {
      throw new TypeError(`agent ${agent.name} has the tool ${candidate.name}, another agent's asTool(), which would run that agent inline in one tool Step, without its own Steps, approvals or crash recovery: make that agent a session Flow of its own and pass agentTool from @perdure/agents/stepwise in this adapter's agentTools option, which runs it as a durable child session`);
    }
  }
}

function usageOf(usage: { requests?: number; inputTokens?: number; outputTokens?: number; totalTokens?: number; inputTokensDetails?: unknown; outputTokensDetails?: unknown } | undefined): AgentUsage {
  if (usage === undefined) return emptyAgentUsage();
  const detail = (details: unknown, key: string): number => {
    const entries = Array.isArray(details) ? details : [details];
    return entries.reduce((sum: number, entry) => sum + (typeof entry === "object" && entry !== null && typeof (entry as Record<string, unknown>)[key] === "number" ? (entry as Record<string, number>)[key]! : 0), 0);
  };
  return {
    ...emptyAgentUsage(),
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    totalTokens: usage.totalTokens ?? 0,
    cachedInputTokens: detail(usage.inputTokensDetails, "cached_tokens"),
    reasoningTokens: detail(usage.outputTokensDetails, "reasoning_tokens"),
    requests: Math.max(1, usage.requests ?? 1),
  };
}

function finalText(output: unknown): string {
  if (output === undefined || output === null) return "";
  return typeof output === "string" ? output : JSON.stringify(output);
}

/** A model's name for people: a model name string, or the name an OpenAI provider model keeps. */
function modelNameOf(model: unknown): string | undefined {
  if (typeof model === "string") return model === "" ? undefined : model;
  const name: unknown = typeof model === "object" && model !== null ? (model as { _model?: unknown })._model : undefined;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/**
 * Runs an OpenAI Agents SDK agent as the session's runner.
 *
 * @example
 * const runner = new OpenAiAgentsRunner(supportAgent);
 * export const supportFlow = createAgentSessionFlow(runner, "SupportAgent", { toolPolicies });
 */
export class OpenAiAgentsRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly agent: AnyAgent;
  private readonly runner: Runner;
  private readonly tools: ReadonlyMap<string, AnyFunctionTool>;
  private readonly agentTools: AgentToolSet;
  /** The model the run configuration or the agent names, for `perdure dev`'s banner. */
  readonly modelDescription: string | undefined;
  /** The model instance the SDK would pick over the provider (the agent's, else the run configuration's), or undefined for a model name. */
  private readonly modelInstance: Model | undefined;
  /** Set on a runner that `withRecordedModel` made: model calls are answered from the recording. */
  private readonly replay: RecordedModelReplay | undefined = undefined;

  constructor(agent: AnyAgent, options: OpenAiAgentsRunnerOptions = {}) {
    if (!(agent instanceof Agent)) throw new TypeError("OpenAiAgentsRunner takes an Agent of @openai/agents");
    checkAgent(agent);
    this.agent = agent;
    this.tools = new Map(agent.tools.filter(isFunctionTool).map((candidate) => [candidate.name, candidate]));
    this.agentTools = new AgentToolSet(options.agentTools, agent.name);
    for (const agentTool of this.agentTools.list) {
      if (this.tools.has(agentTool.name)) throw new TypeError(`agent ${agent.name} has a tool and an agentTool both named ${agentTool.name}`);
    }
    this.runner = new Runner({ tracingDisabled: true, ...options.runConfig });
    // Every model call is recorded for export and replay: models named by string through the provider, an instance by wrapping it.
    this.runner.config.modelProvider = recordingModelProvider(this.runner.config.modelProvider);
    const agentNamesModel = agent.model !== Agent.DEFAULT_MODEL_PLACEHOLDER && agent.model !== undefined;
    const selected = agentNamesModel ? agent.model : options.runConfig?.model;
    this.modelInstance = typeof selected === "object" ? selected : undefined;
    this.modelDescription = modelNameOf(options.runConfig?.model) ?? modelNameOf(agent.model);
  }

  /**
   * A runner of the same agent whose model calls `replay` answers from a
   * recording, for `replaySession`: the SDK builds each request as usual
   * and gets the recorded response; no model is resolved or called.
   */
  withRecordedModel(replay: RecordedModelReplay): OpenAiAgentsRunner {
    const copy = Object.create(OpenAiAgentsRunner.prototype) as OpenAiAgentsRunner;
    Object.assign(copy, this, { replay });
    return copy;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: userItem(text) };
  }

  /** The agent the SDK runs in this turn: every tool deferred, and the session's enabled built-in tools. */
  private durableAgent(turn: AgentTurnContext): AnyAgent {
    const builtIns = [...this.agentTools.list, ...(turn.enabledBuiltInTools ?? [])].map(schemaTool);
    const instance = this.modelInstance;
    const model = instance === undefined ? {} : { model: new RecordedSdkModel(() => Promise.resolve(instance)) };
    return this.agent.clone({ tools: [...this.tools.values(), ...builtIns].map(deferredTool), ...model });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const agent = this.durableAgent(turn);
    const input = itemsOfMessages(turn.messages);
    const options = { signal: turn.cancellationSignal };
    const scope: ModelCallScope = { turnId: turn.turnId, replay: this.replay, recorded: undefined };
    let result;
    if (turn.frameworkRunState === null) {
      result = await modelCallScope.run(scope, () => this.runner.run(agent, input, options));
    } else {
      const state = await RunState.fromString(agent, turn.frameworkRunState);
      for (const item of state.getInterruptions()) state.approve(item);
      const outputs = new Map(turn.toolCalls.map((call) => [call.toolCallId, call.output ?? outcomeUnknownToolResult]));
      result = await modelCallScope.run(scope, () => recordedOutputs.run(outputs, () => this.runner.run(agent, state, options)));
    }
    const usage = usageOf(result.rawResponses.at(-1)?.usage);
    const modelCall = scope.recorded === undefined ? {} : { modelCall: scope.recorded };
    if (result.interruptions.length > 0) {
      const toolCalls = await Promise.all(result.interruptions.map((item) => this.deferredCall(turn, item, result.runContext)));
      return { kind: "tool_calls_requested", frameworkRunState: result.state.toString(), toolCalls, usage, ...modelCall };
    }
    const text = finalText(result.finalOutput);
    if (text !== "") await turn.events.textDelta(text);
    // The turn's items after its input: tool calls, their results, the answer.
    return { kind: "turn_completed", newMessages: result.history.slice(input.length).map(messageOfItem), usage, ...modelCall };
  }

  private async deferredCall(turn: AgentTurnContext, item: RunToolApprovalItem, runContext: RunContext<unknown>): Promise<DeferredToolCall> {
    const raw = item.rawItem;
    if (raw.type !== "function_call") throw new Error(`the SDK stopped for a ${raw.type} item, which is not a function tool call`);
    if (this.agentTools.has(raw.name)) return this.agentTools.deferredToolCall(turn, { toolCallId: raw.callId, toolName: raw.name, arguments: raw.arguments });
    const original = this.tools.get(raw.name);
    return {
      toolCallId: raw.callId,
      toolName: raw.name,
      arguments: raw.arguments,
      policy: turn.resolveToolPolicy(raw.name, original === undefined ? undefined : await frameworkPolicy(original, runContext, raw.arguments, raw.callId)),
    };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    if (this.agentTools.has(call.toolCall.toolName)) return this.agentTools.executeDeferredToolCall(call);
    const original = this.tools.get(call.toolCall.toolName);
    if (original === undefined) throw new Error(`agent ${this.agent.name} has no tool ${call.toolCall.toolName}`);
    const details = {
      toolCall: { type: "function_call" as const, callId: call.toolCall.toolCallId, name: call.toolCall.toolName, arguments: call.toolCall.arguments },
      signal: call.cancellationSignal,
    };
    const output: unknown = await original.invoke(new RunContext(), call.toolCall.arguments, details);
    // The default errorFunction turns a throw into a "successful" stock text; fail the Step instead, so a read
    // is retried and a write is recorded as failed with an unknown outcome, never as succeeded.
    if (output === openAiAgentsDefaultToolErrorText) throw new Error(hiddenToolErrorMessage(call.toolCall.toolName));
    return { output: typeof output === "string" ? output : JSON.stringify(output) };
  }

  /** Follows an agentTool's child session; the SDK's own tools start no tasks. */
  pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    return this.agentTools.pollToolTask(poll);
  }

  /** Cancels an abandoned agentTool call's child turn. */
  cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    return this.agentTools.cancelToolTask(cancellation);
  }
}

/**
 * The SDK tool's own `needsApproval`, evaluated on the call's input: `true`
 * asks for approval; `false` leaves the effect's default, because the SDK
 * cannot tell an explicit `false` from no setting.
 */
async function frameworkPolicy(original: AnyFunctionTool, runContext: RunContext<unknown>, argumentsText: string, callId: string): Promise<FrameworkToolPolicy | undefined> {
  let input: unknown;
  try {
    input = JSON.parse(argumentsText) as unknown;
  } catch {
    return undefined;
  }
  try {
    return (await original.needsApproval(runContext, input as never, callId)) ? { requiresApproval: true } : undefined;
  } catch {
    return { requiresApproval: true };
  }
}
