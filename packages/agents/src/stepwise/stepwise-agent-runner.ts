import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  DeferredToolCall,
  DeferredToolExecution,
  DeferredToolOutcome,
  ToolInputRequested,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
  ToolTaskStarted,
} from "../runner/agent-framework-runner.ts";
import { buildPlanNote } from "../session/plans/plan-note.ts";
import { ToolExecutionError } from "../runner/tool-execution-error.ts";
import { selectUnstoredToolCalls } from "../runner/unstored-tool-calls.ts";
import type { FrameworkMessage } from "../values/agent-message.ts";
import type { AgentToolCall } from "../values/agent-tool-call.ts";
import { missingToolTaskPoller, outcomeUnknownToolResult } from "../values/result-texts.ts";
import { resolveAgentDefinition, type AgentDefinition, type ResolvedAgentDefinition } from "./agent-definition.ts";
import type { FunctionTool, ToolCallContext } from "./function-tool.ts";
import { parseToolArguments } from "./json-schema-validation.ts";
import type { ModelOutputItem, ModelRequest, ModelResponse, ModelToolDefinition, StepwiseInputItem, ToolResultItem } from "./model-client.ts";
import { pythonJsonDumps } from "./python-json.ts";
import { listToolSources, type SourceListing } from "./tool-source-listing.ts";
import type { ToolSource } from "./tool-source.ts";

function isToolInputRequested(value: unknown): value is ToolInputRequested {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "tool_input_requested";
}

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

function isInputItem(value: unknown): value is StepwiseInputItem {
  const type = (value as { type?: unknown } | null)?.type;
  return type === "user_text" || type === "model_output" || type === "tool_result";
}

/**
 * The model input from stored items only. Every tool call of a model output
 * is paired with a result before the next model output or user text; a
 * missing one gets the outcome-unknown text, so no provider sees an orphan.
 */
export function buildModelInput(items: readonly unknown[]): StepwiseInputItem[] {
  const input: StepwiseInputItem[] = [];
  let open: ModelOutputItem["tool_calls"] = [];
  const answered = new Set<string>();
  const closeOpenCalls = (): void => {
    for (const call of open) {
      if (!answered.has(call.id)) input.push({ type: "tool_result", tool_call_id: call.id, tool_name: call.name, output: outcomeUnknownToolResult });
    }
    open = [];
    answered.clear();
  };
  for (const item of items) {
    if (!isInputItem(item)) continue;
    if (item.type === "tool_result") {
      answered.add(item.tool_call_id);
      input.push(item);
      continue;
    }
    closeOpenCalls();
    input.push(item);
    if (item.type === "model_output") open = item.tool_calls ?? [];
  }
  closeOpenCalls();
  return input;
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

  constructor(definition: AgentDefinition) {
    this.definition = resolveAgentDefinition(definition);
  }

  /** The model client's own description, when it has one. */
  get modelDescription(): string | undefined {
    return this.definition.model.description;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return { role: "user", text, frameworkItem: { type: "user_text", text } };
  }

  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return resultMessages(selectUnstoredToolCalls(turn));
  }

  private async instructions(turn: AgentTurnContext): Promise<string> {
    const { instructions } = this.definition;
    if (typeof instructions === "string") return instructions;
    return instructions({ flowId: turn.flowId, turnId: turn.turnId, attempt: turn.attempt, interactionMode: turn.interactionMode, plan: turn.plan ?? null });
  }

  private functionToolDefinitions(): ModelToolDefinition[] {
    return [...this.definition.tools.values()].map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const previous = turn.frameworkRunState === null ? 0 : (JSON.parse(turn.frameworkRunState) as StepwiseRunState).model_calls;
    const modelCall = previous + 1;
    const limit = this.definition.maxModelCallsPerTurn;
    const offersTools = modelCall <= limit;
    const isPlanning = turn.interactionMode === "planning";
    const results = resultMessages(selectUnstoredToolCalls(turn));
    // A planning turn lists no sources and offers only the built-in tools the session enabled for it (write_todos).
    const listing: SourceListing = offersTools && !isPlanning
      ? await listToolSources(this.definition, turn.cancellationSignal)
      : { tools: [], bySource: new Map() };
    const builtIns = (turn.enabledBuiltInTools ?? []).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters as ModelToolDefinition["parameters"] }));
    const tools = offersTools ? [...(isPlanning ? [] : this.functionToolDefinitions()), ...listing.tools, ...builtIns] : [];
    this.checkNameClashes(tools, new Set(builtIns.map((tool) => tool.name)));
    const forcesPlan = isPlanning && offersTools && this.definition.planningToolChoice === "required" && modelCall === 1 && turn.plan?.status !== "draft"
      && builtIns.some((tool) => tool.name === "write_todos");
    const request: ModelRequest = {
      flowId: turn.flowId,
      turnId: turn.turnId,
      attempt: turn.attempt,
      instructions: await this.instructions(turn),
      input: buildModelInput(this.inputItems(turn, results)),
      tools,
      ...(forcesPlan ? { toolChoice: "required" as const } : {}),
      modelSettings: this.definition.modelSettings,
      events: turn.events,
      signal: turn.cancellationSignal,
    };
    const response = await this.definition.model.call(request);
    const output = this.modelOutputMessage(response);
    const usage = response.usage;
    const metadata = response.metadata === undefined ? {} : { modelCallMetadata: response.metadata };
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
      toolCalls: response.toolCalls.map((call) => this.deferredToolCall(turn, call, listing)),
      usage,
      newMessages: [...results, output],
      ...metadata,
    };
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

  private deferredToolCall(turn: AgentTurnContext, call: ModelResponse["toolCalls"][number], listing: SourceListing): DeferredToolCall {
    const tool = this.definition.tools.get(call.toolName);
    if (tool !== undefined) {
      // The agent definition's own policies apply even when the session was built around this runner
      // with other options; the session's policies still win.
      const definitionPolicy = this.definition.toolPolicies[call.toolName];
      const source = definitionPolicy ?? tool;
      const framework = { ...(source.effect === undefined ? {} : { effect: source.effect }), ...(source.requiresApproval === undefined ? {} : { requiresApproval: source.requiresApproval }) };
      return { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments, policy: turn.resolveToolPolicy(call.toolName, framework) };
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
    return this.executeFunctionTool(tool, call);
  }

  private async executeFunctionTool(tool: FunctionTool, call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const parsed = parseToolArguments(call.toolCall.arguments, tool.parameters);
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
