import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  ContextSummaryRequest,
  ContextSummaryResult,
  DeferredToolCall,
  DeferredToolExecution,
  DeferredToolOutcome,
  RecordedModelCall,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
} from "../contract/agent-framework-runner.ts";
import { buildModelInput } from "./stepwise-input.ts";
import { buildPlanNote } from "../contract/plan-note.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import type { SessionSettings } from "../contract/values/session-settings.ts";
import { agentUsageToWire } from "../contract/values/agent-usage.ts";
import { contextSummaryItems, selectStepwiseUnstoredToolCalls } from "./compaction/compacted-turn.ts";
import { selectStepwiseCompactionCutoff } from "./compaction/select-compaction-cutoff.ts";
import { buildSummaryModelRequest } from "./compaction/summary-request.ts";
import { estimateInputTokensWith } from "./compaction/token-estimate.ts";
import type { FrameworkMessage } from "../contract/values/agent-message.ts";
import type { AgentToolCall } from "../contract/values/agent-tool-call.ts";
import { missingToolTaskPoller, outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import { resolveAgentDefinition, type AgentDefinition, type ResolvedAgentDefinition } from "./agent-definition.ts";
import { executeFunctionToolCall } from "./function-tool-call.ts";
import { evaluateToolApproval } from "./tool-approval.ts";
import { defaultRequiresApproval } from "../contract/values/tool-effect.ts";
import type { ModelClient, ModelOutputItem, ModelRequest, ModelResponse, ModelToolDefinition, ToolResultItem } from "./model-client.ts";
import { listToolSources, type SourceListing } from "./tool-source-listing.ts";
import type { ListedTool, ToolSource } from "./tool-source.ts";

/** The run state between a turn's model calls: only the count. */
interface StepwiseRunState {
  model_calls: number;
}

/** The result a call gets when the turn ran out of model calls. */
export function modelCallLimitToolResult(limit: number): string {
  return `The tool call was not run: this turn reached its limit of ${limit} model calls.`;
}

function toolResultMessage(toolCallId: string, toolName: string, output: string): FrameworkMessage {
  const item: ToolResultItem = { type: "tool_result", tool_call_id: toolCallId, tool_name: toolName, output };
  return { role: "tool", text: output, toolCallId, toolName, frameworkItem: item };
}

function resultMessages(calls: readonly AgentToolCall[]): FrameworkMessage[] {
  return calls.map((call) => toolResultMessage(call.toolCallId, call.toolName, call.output ?? outcomeUnknownToolResult));
}

export { buildModelInput } from "./stepwise-input.ts";

/** A model request as `ModelCalls` keeps it: what the model is sent, without the live handles (events, signal) and IDs. */
export function recordedModelRequest(request: ModelRequest): Record<string, unknown> {
  return {
    instructions: request.instructions,
    input: request.input,
    tools: request.tools,
    tool_choice: request.toolChoice ?? "auto",
    model_settings: request.modelSettings ?? null,
  };
}

/** A model call as `ModelCalls` keeps it: the request without its live handles, and the response. */
export function recordedModelCall(request: ModelRequest, response: ModelResponse): RecordedModelCall {
  return {
    request: recordedModelRequest(request),
    response: {
      text: response.text,
      tool_calls: response.toolCalls.map((call) => ({ tool_call_id: call.toolCallId, tool_name: call.toolName, arguments: call.arguments })),
      usage: agentUsageToWire(response.usage),
      provider: response.provider,
      api: response.api,
      item: response.item ?? null,
    },
  };
}

/**
 * The built-in agent loop's runner: one model call per `RunModel`, the turn's
 * transcript stored as it goes, function tools checked against their JSON
 * Schema, and tool sources listed in every model call.
 */
export class StepwiseAgentRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly definition: ResolvedAgentDefinition;
  /** A planning turn offers only `write_todos`, so plan mode works with this runner. */
  readonly supportsPlanMode = true;
  /** Each source's tools as this runner listed them last, for estimates of sources without `cachedTools`. */
  private readonly lastListings = new Map<string, readonly ListedTool[]>();

  constructor(definition: AgentDefinition) {
    this.definition = resolveAgentDefinition(definition);
  }

  /**
   * A runner with this definition that calls `model` for every model call,
   * whatever `resolveModel` would pick: `replaySession` answers today's
   * agent code from a recording this way.
   *
   * @example
   * const replaying = runner.withModel(new ScriptedModelClient(() => ({ text: "ok" })));
   */
  withModel(model: ModelClient): StepwiseAgentRunner {
    const copy = Object.create(StepwiseAgentRunner.prototype) as StepwiseAgentRunner;
    Object.assign(copy, this, { definition: { ...this.definition, model, resolveModel: undefined }, lastListings: new Map() });
    return copy;
  }

  /** The names `resolveModel` accepts as `settings.model`, from the definition. */
  get modelChoices(): readonly string[] {
    return this.definition.modelChoices;
  }

  /** The model client's own description, when it has one. */
  get modelDescription(): string | undefined {
    return this.definition.model.description;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: { type: "user_text", text } };
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return resultMessages(selectStepwiseUnstoredToolCalls(turn));
  }

  /**
   * The model of a call under these settings: `resolveModel`'s pick, else
   * `model`. With `modelChoices`, a `settings.model` that is not one of them
   * (a stale name, or `constructor` and `__proto__`, which an index lookup
   * would find on `Object.prototype`) gets `model` without asking `resolveModel`.
   */
  modelFor(settings: SessionSettings): ModelClient {
    const { resolveModel, model, modelChoices } = this.definition;
    if (resolveModel === undefined) return model;
    if (modelChoices.length > 0 && Object.hasOwn(settings, "model") && !modelChoices.includes(settings.model as string)) return model;
    const resolved = resolveModel(settings);
    if (typeof resolved?.call !== "function") throw new TypeError(`resolveModel of agent ${this.definition.name} returned no ModelClient (an object with call(request))`);
    return resolved;
  }

  private async instructions(turn: AgentTurnContext): Promise<string> {
    const { instructions } = this.definition;
    if (typeof instructions === "string") return instructions;
    return instructions({
      flowId: turn.flowId, turnId: turn.turnId, attempt: turn.attempt, interactionMode: turn.interactionMode, plan: turn.plan ?? null,
      sessionSettings: turn.sessionSettings ?? {},
    });
  }

  /** Where the turn's model call stands: its number, whether it offers tools, and whether the turn plans. */
  private callShape(turn: AgentTurnContext): { modelCall: number; offersTools: boolean; isPlanning: boolean } {
    const previous = turn.frameworkRunState === null ? 0 : (JSON.parse(turn.frameworkRunState) as StepwiseRunState).model_calls;
    const modelCall = previous + 1;
    return { modelCall, offersTools: modelCall <= this.definition.maxModelCallsPerTurn, isPlanning: turn.interactionMode === "planning" };
  }

  private builtInDefinitions(turn: AgentTurnContext): ModelToolDefinition[] {
    return (turn.enabledBuiltInTools ?? []).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters as ModelToolDefinition["parameters"] }));
  }

  /**
   * `RunModel`'s estimate under a compaction policy: the next model call's
   * instructions, input and tools, counted by the resolved model when it
   * counts, else at 4 characters per token. A source's tools come from its
   * `cachedTools()`, else from this runner's last listing of it, without I/O.
   */
  async estimateInputTokens(turn: AgentTurnContext): Promise<number> {
    const model = this.modelFor(turn.sessionSettings ?? {});
    const { offersTools, isPlanning } = this.callShape(turn);
    const sourceTools = offersTools && !isPlanning
      ? [...this.definition.toolSources.values()].flatMap((source) => source.cachedTools?.() ?? this.lastListings.get(source.sourceName) ?? [])
      : [];
    const tools = offersTools
      ? [...(isPlanning ? [] : this.functionToolDefinitions()), ...sourceTools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })), ...this.builtInDefinitions(turn)]
      : [];
    const request: ModelRequest = {
      flowId: turn.flowId,
      turnId: turn.turnId,
      attempt: turn.attempt,
      instructions: await this.instructions(turn),
      input: this.modelInput(turn, resultMessages(selectStepwiseUnstoredToolCalls(turn))),
      tools,
      modelSettings: this.definition.modelSettings,
      events: turn.events,
      signal: turn.cancellationSignal,
    };
    return estimateInputTokensWith(model, request);
  }

  /** Cuts only between model responses whose tool calls all have stored results, keeping at most the budget after the cut. */
  selectCompactionCutoff(turn: AgentTurnContext, retainedTokenBudget: number): number | null {
    return selectStepwiseCompactionCutoff(turn.messages, retainedTokenBudget);
  }

  /** One summary call with `contextSummaryInstructions` and no tools, on the model `resolveModel` picks. */
  async summarizeContext(request: ContextSummaryRequest): Promise<ContextSummaryResult> {
    const model = this.modelFor(request.sessionSettings);
    const { modelRequest } = buildSummaryModelRequest(request, this.definition.modelSettings, (built) => estimateInputTokensWith(model, built));
    const response = await model.call(modelRequest);
    return { summary: response.text, usage: response.usage, ...(response.metadata === undefined ? {} : { modelCallMetadata: response.metadata }) };
  }

  private functionToolDefinitions(): ModelToolDefinition[] {
    return [...this.definition.tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const { modelCall, offersTools, isPlanning } = this.callShape(turn);
    const limit = this.definition.maxModelCallsPerTurn;
    const model = this.modelFor(turn.sessionSettings ?? {});
    const results = resultMessages(selectStepwiseUnstoredToolCalls(turn));
    // A planning turn lists no sources and offers only the built-in tools the session enabled for it (write_todos).
    const listing: SourceListing = offersTools && !isPlanning
      ? await listToolSources(this.definition, turn.cancellationSignal)
      : { tools: [], bySource: new Map() };
    if (offersTools && !isPlanning) this.rememberListing(listing);
    const builtIns = this.builtInDefinitions(turn);
    const tools = offersTools ? [...(isPlanning ? [] : this.functionToolDefinitions()), ...listing.tools, ...builtIns] : [];
    this.checkNameClashes(tools, new Set(builtIns.map((tool) => tool.name)));
    const forcesPlan = isPlanning && offersTools && this.definition.planningToolChoice === "required" && modelCall === 1 && turn.plan?.status !== "draft"
      && builtIns.some((tool) => tool.name === "write_todos");
    const request: ModelRequest = {
      flowId: turn.flowId,
      turnId: turn.turnId,
      attempt: turn.attempt,
      instructions: await this.instructions(turn),
      input: this.modelInput(turn, results),
      tools,
      ...(forcesPlan ? { toolChoice: "required" as const } : {}),
      modelSettings: this.definition.modelSettings,
      events: turn.events,
      signal: turn.cancellationSignal,
    };
    const response = await model.call(request);
    const output = this.modelOutputMessage(response);
    const usage = response.usage;
    const metadata = { ...(response.metadata === undefined ? {} : { modelCallMetadata: response.metadata }), modelCall: recordedModelCall(request, response) };
    if (response.toolCalls.length === 0) {
      return { kind: "turn_completed", newMessages: [...results, output], usage, ...metadata };
    }
    if (!offersTools) {
      const refused = response.toolCalls.map((call) => toolResultMessage(call.toolCallId, call.toolName, modelCallLimitToolResult(limit)));
      return { kind: "turn_completed", newMessages: [...results, output, ...refused], usage, ...metadata };
    }
    return {
      kind: "tool_calls_requested",
      frameworkRunState: JSON.stringify({ model_calls: modelCall } satisfies StepwiseRunState),
      toolCalls: await Promise.all(response.toolCalls.map((call) => this.deferredToolCall(turn, call, listing))),
      usage,
      newMessages: [...results, output],
      ...metadata,
    };
  }

  /** Each source's tools of this listing, for later estimates. */
  private rememberListing(listing: SourceListing): void {
    const bySource = new Map<string, ListedTool[]>([...this.definition.toolSources.keys()].map((name) => [name, []]));
    for (const { source, tool } of listing.bySource.values()) bySource.get(source.sourceName)?.push(tool);
    for (const [name, tools] of bySource) this.lastListings.set(name, tools);
  }

  /** The model input: the summary note after a compaction, then the stored items and the unstored results. */
  private modelInput(turn: AgentTurnContext, results: readonly FrameworkMessage[]): ModelRequest["input"] {
    return [...contextSummaryItems(turn), ...buildModelInput(this.inputItems(turn, results))];
  }

  /**
   * The stored items of the turn's model input, with the plan note as user
   * text before the turn's messages, so the model always sees the latest plan.
   */
  private inputItems(turn: AgentTurnContext, results: readonly FrameworkMessage[]): unknown[] {
    const items = [...turn.messages.map((message) => message.frameworkItem), ...results.map((message) => message.frameworkItem)];
    const note = buildPlanNote(turn.plan ?? null, turn.interactionMode);
    if (note === null) return items;
    const turnStart = turn.messages.findIndex((message) => message.turnId === turn.turnId);
    items.splice(turnStart === -1 ? items.length : turnStart, 0, { type: "user_text", text: note });
    return items;
  }

  private checkNameClashes(tools: readonly ModelToolDefinition[], builtInNames: ReadonlySet<string>): void {
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name)) {
        if (builtInNames.has(tool.name)) throw new TypeError(`tool ${tool.name} uses the name of an enabled built-in tool`);
        throw new TypeError(this.definition.tools.has(tool.name) ? `tool ${tool.name} of a tool source uses the name of a function tool` : `two tool sources list a tool named ${tool.name}`);
      }
      seen.add(tool.name);
    }
  }

  private modelOutputMessage(response: ModelResponse): FrameworkMessage {
    const item: ModelOutputItem = {
      type: "model_output",
      provider: response.provider,
      api: response.api,
      item: response.item,
      text: response.text,
      tool_calls: response.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.arguments })),
    };
    return { role: "assistant", text: response.text, frameworkItem: item };
  }

  private async deferredToolCall(turn: AgentTurnContext, call: ModelResponse["toolCalls"][number], listing: SourceListing): Promise<DeferredToolCall> {
    const tool = this.definition.tools.get(call.toolName);
    if (tool !== undefined) {
      // The agent definition's own policies apply even when the session was built around this runner
      // with other options; the session's policies still win. The tool's own approval is evaluated per call.
      // When the session has a policy for the tool, it decides alone, and sees the tool's own approval (to log an override).
      const definitionPolicy = Object.hasOwn(turn.toolPolicies, call.toolName) ? undefined : this.definition.toolPolicies[call.toolName];
      const toolApproval = await evaluateToolApproval(tool.requiresApproval, call.arguments, call.toolCallId);
      const effect = definitionPolicy?.effect ?? tool.effect;
      const requiresApproval = definitionPolicy === undefined
        ? toolApproval
        : definitionPolicy.requiresApproval ?? (defaultRequiresApproval(definitionPolicy.effect) || toolApproval === true);
      const framework = { ...(effect === undefined ? {} : { effect }), ...(requiresApproval === undefined ? {} : { requiresApproval }) };
      return {
        toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, policy: turn.resolveToolPolicy(call.toolName, framework),
        ...(tool.startsSubAgent === true ? { startsSubAgent: true } : {}),
      };
    }
    const listed = listing.bySource.get(call.toolName);
    if (listed !== undefined) {
      const deferred = listed.source.deferredToolCall({
        toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, listedTool: listed.tool, resolveToolPolicy: turn.resolveToolPolicy,
      });
      const { reference, ...rest } = deferred;
      return { ...rest, toolSourceReference: JSON.stringify({ stepwise_tool_source: listed.source.sourceName, reference: reference ?? null }) };
    }
    // A name nobody offered never reaches a source: it fails at once, with no approval.
    return { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, policy: { effect: "unclassified", requiresApproval: false } };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const reference = call.toolCall.toolSourceReference;
    if (reference !== undefined) return this.executeSourceCall(call, reference);
    const tool = this.definition.tools.get(call.toolCall.toolName);
    if (tool === undefined) throw new ToolExecutionError(`unknown tool ${call.toolCall.toolName}`);
    return executeFunctionToolCall(tool, call);
  }

  /** Polls a function tool's task through the tool's own `pollTask`, or a tool source's through the source. */
  async pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    const sourced = this.storedSource(poll.toolCall.toolCallId, poll.toolCall.toolSourceReference);
    if (sourced !== undefined) {
      if (sourced.source.pollToolTask === undefined) throw new ToolExecutionError(missingToolTaskPoller);
      return sourced.source.pollToolTask({ ...poll, reference: sourced.reference });
    }
    const pollTask = this.definition.tools.get(poll.toolCall.toolName)?.pollTask;
    if (pollTask === undefined) throw new ToolExecutionError(missingToolTaskPoller);
    return pollTask(poll);
  }

  /** Stops a function tool's abandoned task through the tool's own `cancelTask`, when it has one. */
  async cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    const sourced = this.storedSource(cancellation.toolCall.toolCallId, cancellation.toolCall.toolSourceReference);
    if (sourced !== undefined) {
      await sourced.source.cancelToolTask?.({ ...cancellation, reference: sourced.reference });
      return;
    }
    await this.definition.tools.get(cancellation.toolCall.toolName)?.cancelTask?.(cancellation);
  }

  /** The source a stored call belongs to, with its reference; a source this Worker lacks throws a `RangeError`. */
  private storedSource(toolCallId: string, referenceText: string | undefined): { source: ToolSource; reference: unknown } | undefined {
    if (referenceText === undefined) return undefined;
    const stored = JSON.parse(referenceText) as { stepwise_tool_source?: unknown; reference?: unknown };
    const sourceName = typeof stored.stepwise_tool_source === "string" ? stored.stepwise_tool_source : "";
    const source = this.definition.toolSources.get(sourceName);
    if (source === undefined) {
      throw new RangeError(`tool call ${toolCallId} belongs to tool source ${JSON.stringify(sourceName)}, which this Worker's agent does not have`);
    }
    return { source, reference: stored.reference ?? null };
  }

  private async executeSourceCall(call: DeferredToolExecution, referenceText: string): Promise<DeferredToolOutcome> {
    const { source, reference } = this.storedSource(call.toolCall.toolCallId, referenceText) as { source: ToolSource; reference: unknown };
    const result = await source.executeDeferredToolCall({ ...call, reference });
    if ((result as { kind?: unknown }).kind === "tool_task_started" && source.pollToolTask === undefined) throw new ToolExecutionError(missingToolTaskPoller);
    return result;
  }
}
