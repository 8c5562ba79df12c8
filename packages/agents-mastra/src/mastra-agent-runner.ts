/**
 * `MastraAgentRunner`: a Mastra `Agent` as the session's runner. Each
 * `RunModel` runs one step of Mastra's own loop (`agent.stream` with
 * `maxSteps: 1`), the agent's tools offered as Mastra client tools, so Mastra
 * hands each call back instead of running it; each call then runs the
 * agent's own tool in its own tool Step.
 */
import { Agent } from "@mastra/core/agent";
import type { ProcessInputStepArgs, ProcessInputStepResult } from "@mastra/core/processors";
import { RequestContext } from "@mastra/core/request-context";
import {
  emptyAgentUsage,
  outcomeUnknownToolResult,
  selectUnstoredToolCalls,
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type AgentUsage,
  type DeferredToolCall,
  type DeferredToolExecution,
  type DeferredToolOutcome,
  type FrameworkMessage,
  type ModelCallMetadata,
  type RecordedModelReplay,
  type ToolTaskCancellation,
  type ToolTaskPoll,
  type ToolTaskPollOutcome,
} from "@perdure/agents";
import { AgentToolSet, type FunctionTool } from "@perdure/agents/stepwise";
import { assistantMessage, modelMessagesOf, toolResultMessage, userMessage, type MastraModelMessage } from "./mastra-messages.ts";
import { recordedMastraModel, type MastraModelCallScope } from "./mastra-model-calls.ts";
import { readMastraStep, type MastraStep } from "./mastra-step.ts";
import { builtInClientTool, checkDeferrableTool, executeMastraTool, frameworkPolicyOf, schemaOnlyTool, type MastraTool } from "./mastra-tools.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any agent, whatever its tools, output and request context
export type AnyMastraAgent = Agent<any, any, any, any>;

/** Options of {@link MastraAgentRunner}. */
export interface MastraAgentRunnerOptions {
  /**
   * Makes the request context of each model call and each tool call, for an
   * agent whose instructions, model or tools read it. The tool Step adds the
   * call's idempotency key under `idempotencyKeyRequestContextKey`.
   * @default () => new RequestContext()
   */
  createRequestContext?: () => RequestContext;
  /**
   * Sub-agents as durable child sessions: tools made by `agentTool` from
   * `@perdure/agents/stepwise`, offered to the model beside the agent's own
   * tools. Each call starts a child session and waits for its answer as a
   * tool task, as in a Stepwise agent. Use them instead of Mastra `agents`.
   * @default []
   */
  agentTools?: readonly FunctionTool[];
}

function checkAgent(agent: AnyMastraAgent): void {
  if (agent.hasOwnMemory()) {
    throw new TypeError(`agent ${agent.name} has Mastra memory; the session stores the conversation, so create the agent without memory (see the package README's limits)`);
  }
  // Mastra has no public synchronous accessor; should a later release drop this one, activeTools still keeps sub-agents from the model.
  const hasSubAgents = (agent as unknown as { __hasSubAgentsConfigured?: () => boolean }).__hasSubAgentsConfigured;
  if (typeof hasSubAgents === "function" && hasSubAgents.call(agent)) {
    throw new TypeError(`agent ${agent.name} has sub-agents (agents), which Mastra would run inline without their own Steps, approvals or crash recovery; a durable session runs one agent: make each sub-agent a session Flow of its own and pass agentTool from @perdure/agents/stepwise in this adapter's agentTools option, which runs it as a durable child session`);
  }
}

function usageOf(step: MastraStep): AgentUsage {
  const usage = step.usage;
  return {
    ...emptyAgentUsage(),
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    totalTokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
    reasoningTokens: usage.reasoningTokens ?? 0,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    requests: 1,
  };
}

function metadataOf(step: MastraStep): ModelCallMetadata {
  return {
    ...(step.modelId === undefined ? {} : { requestModel: step.modelId, responseModel: step.modelId }),
    ...(step.provider === undefined ? {} : { providerName: step.provider }),
    ...(step.responseId === undefined ? {} : { responseId: step.responseId }),
    ...(step.finishReason === undefined ? {} : { finishReasons: [step.finishReason] }),
  };
}

/** A model's name for people: a `"provider/model"` string, or a provider model's provider and ID. */
function modelNameOf(model: unknown): string | undefined {
  if (typeof model === "string") return model === "" ? undefined : model;
  if (typeof model !== "object" || model === null) return undefined;
  const { provider, modelId } = model as { provider?: unknown; modelId?: unknown };
  return typeof modelId === "string" ? (typeof provider === "string" ? `${provider} ${modelId}` : modelId) : undefined;
}

/**
 * Runs a Mastra `Agent` as the session's runner.
 *
 * @example
 * const runner = new MastraAgentRunner(supportAgent);
 * export const supportFlow = createAgentSessionFlow(runner, "SupportAgent", { toolPolicies });
 */
export class MastraAgentRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly agent: AnyMastraAgent;
  private readonly createRequestContext: () => RequestContext;
  private readonly agentTools: AgentToolSet;
  /** The agent's model when it names one up front (not a function or fallbacks), for `perdure dev`'s banner. */
  readonly modelDescription: string | undefined;
  /** Set on a runner that `withRecordedModel` made: model calls are answered from the recording. */
  private readonly replay: RecordedModelReplay | undefined = undefined;

  constructor(agent: AnyMastraAgent, options: MastraAgentRunnerOptions = {}) {
    if (!(agent instanceof Agent)) throw new TypeError("MastraAgentRunner takes an Agent of @mastra/core");
    checkAgent(agent);
    this.agent = agent;
    this.createRequestContext = options.createRequestContext ?? (() => new RequestContext());
    this.agentTools = new AgentToolSet(options.agentTools, agent.name);
    this.modelDescription = modelNameOf((agent as unknown as { model?: unknown }).model);
  }

  /**
   * A runner of the same agent whose model calls `replay` answers from a
   * recording, for `replaySession`: Mastra builds each call as usual and
   * gets the recorded stream parts; the model is not called.
   */
  withRecordedModel(replay: RecordedModelReplay): MastraAgentRunner {
    const copy = Object.create(MastraAgentRunner.prototype) as MastraAgentRunner;
    Object.assign(copy, this, { replay });
    return copy;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return userMessage(text);
  }

  /**
   * The step's `prepareStep`: the agent's own (from its default options),
   * then the model it leaves wrapped for recording or replay. A model the
   * agent's `prepareStep` names by string is not wrapped, and its call is
   * not recorded.
   */
  private async recordingPrepareStep(requestContext: RequestContext, scope: MastraModelCallScope): Promise<(args: ProcessInputStepArgs) => Promise<ProcessInputStepResult>> {
    const defaults = await this.agent.getDefaultOptions({ requestContext });
    const own = (defaults as { prepareStep?: (args: ProcessInputStepArgs) => unknown } | undefined)?.prepareStep;
    return async (args) => {
      const result = ((own === undefined ? undefined : await own(args)) ?? {}) as ProcessInputStepResult;
      const model: unknown = result.model ?? args.model;
      const wrappable = typeof model === "object" && model !== null && typeof (model as { doStream?: unknown }).doStream === "function";
      return wrappable ? { ...result, model: recordedMastraModel(model, scope) as NonNullable<ProcessInputStepResult["model"]> } : result;
    };
  }

  /** The agent's own tools, each checked to be runnable in a Step. */
  private async deferrableTools(requestContext: RequestContext): Promise<Record<string, MastraTool>> {
    const tools = (await this.agent.listTools({ requestContext })) as Record<string, MastraTool>;
    for (const [name, tool] of Object.entries(tools)) {
      checkDeferrableTool(this.agent.name, name, tool);
      if (this.agentTools.has(name)) throw new TypeError(`agent ${this.agent.name} has a tool and an agentTool both named ${name}`);
    }
    return tools;
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const requestContext = this.createRequestContext();
    const tools = await this.deferrableTools(requestContext);
    const clientTools: Record<string, MastraTool> = Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, schemaOnlyTool(tool)]));
    // The session runs agentTools and built-in tools itself; Mastra sees their schemas.
    for (const definition of [...this.agentTools.list, ...(turn.enabledBuiltInTools ?? [])]) clientTools[definition.name] = builtInClientTool(definition);
    // The previous round's results, stored with this model call's output.
    const results = selectUnstoredToolCalls(turn).map((call) => toolResultMessage(call, call.output ?? outcomeUnknownToolResult));
    const input = [...modelMessagesOf(turn.messages), ...results.map((result) => result.frameworkItem as MastraModelMessage)];
    const scope: MastraModelCallScope = { turnId: turn.turnId, replay: this.replay, recorded: undefined };
    const step = await readMastraStep(this.agent, input, {
      // Client tools only: Mastra hands every call back. activeTools hides the tools Mastra would run inline (sub-agents, workflows, workspace).
      clientTools,
      activeTools: Object.keys(clientTools),
      abortSignal: turn.cancellationSignal,
      requestContext,
      // The step's model, wrapped to record the call (or answer it from a replay's recording), after the agent's own prepareStep.
      prepareStep: await this.recordingPrepareStep(requestContext, scope),
    }, turn.events);
    const newMessages = [...results, ...(step.assistantMessage === undefined ? [] : [assistantMessage(step.assistantMessage)])];
    const usage = usageOf(step);
    const modelCallMetadata = metadataOf(step);
    const modelCall = scope.recorded === undefined ? {} : { modelCall: scope.recorded };
    if (step.toolCalls.length === 0) return { kind: "turn_completed", newMessages, usage, modelCallMetadata, ...modelCall };
    const toolCalls = await Promise.all(step.toolCalls.map(async (call): Promise<DeferredToolCall> => {
      if (this.agentTools.has(call.toolName)) return this.agentTools.deferredToolCall(turn, call);
      const tool = tools[call.toolName];
      return {
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        arguments: call.arguments,
        policy: turn.resolveToolPolicy(call.toolName, tool === undefined ? undefined : await frameworkPolicyOf(tool, call.arguments, call.toolCallId, requestContext)),
      };
    }));
    // The session keeps the turn's messages; the run state only names the response the calls came from.
    const frameworkRunState = JSON.stringify({ responseId: step.responseId ?? null, toolCallIds: step.toolCalls.map((call) => call.toolCallId) });
    return { kind: "tool_calls_requested", frameworkRunState, toolCalls, usage, newMessages, modelCallMetadata, ...modelCall };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    if (this.agentTools.has(call.toolCall.toolName)) return this.agentTools.executeDeferredToolCall(call);
    const requestContext = this.createRequestContext();
    const tools = (await this.agent.listTools({ requestContext })) as Record<string, MastraTool>;
    const tool = tools[call.toolCall.toolName];
    if (tool === undefined) throw new ToolExecutionError(`agent ${this.agent.name} has no tool ${call.toolCall.toolName}`);
    return { output: await executeMastraTool(String(this.agent.id), tool, call, requestContext) };
  }

  /** Follows an agentTool's child session; Mastra's own tools start no tasks. */
  pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    return this.agentTools.pollToolTask(poll);
  }

  /** Cancels an abandoned agentTool call's child turn. */
  cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    return this.agentTools.cancelToolTask(cancellation);
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return selectUnstoredToolCalls(turn).map((call) => toolResultMessage(call, call.output ?? outcomeUnknownToolResult));
  }
}
