/**
 * `ClaudeAgentSdkRunner`: the Claude Agent SDK's agent loop (the Claude Code
 * harness) as the session's runner. Each `RunModel` runs the harness once,
 * resumed from the session's stored transcript through a `SessionStore`.
 * The harness asks `canUseTool` before each call: a read tool may run
 * inside the harness; any other call is denied with `interrupt`, which
 * stops the run, and becomes a deferred call that runs in its own tool Step.
 * The next run resumes at the model's response with the recorded results.
 */
import { rm } from "node:fs/promises";
import { query, type CanUseTool, type Options, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import {
  emptyAgentUsage,
  outcomeUnknownToolResult,
  resolveToolPolicy,
  selectUnstoredToolCalls,
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentToolCall,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolCall,
  type DeferredToolExecution,
  type FrameworkMessage,
  type RecordedModelCall,
  type RecordedModelReplay,
  type ResolvedToolPolicy,
  type ToolEffect,
  type ToolExecutionResult,
  type ToolPolicy,
} from "@perdure/agents";
import { createClaudeConfigFolder } from "./claude-config-folders.ts";
import { checkClaudeQueryOptions } from "./claude-query-options-check.ts";
import { claudeSessionIdOf } from "./claude-session-id.ts";
import { recordedClaudeRequest, recordedClaudeResponse, type RecordedClaudeResponse } from "./claude-model-calls.ts";
import {
  executeSdkTool,
  frameworkPolicyBeforeCalls,
  frameworkPolicyOf,
  harnessToolName,
  sessionToolName,
  toolServer,
  type ClaudeSdkTool,
  type ClaudeToolApproval,
} from "./claude-tools.ts";
import { cutAtDeferral, messagesOfEntries, promptMessage, toolUsesOf, transcriptOf, usageOfEntries } from "./claude-transcript.ts";
import { HarnessToolCalls } from "./harness-tool-calls.ts";
import { RunSessionStore } from "./run-session-store.ts";

/** The agent the harness runs: its system prompt and its tools. */
export interface ClaudeAgentSdkAgent {
  /** The system prompt of every run. @default the SDK's default (no Claude Code preset) */
  systemPrompt?: string;
  /** SDK MCP tools (`tool(...)` of the SDK); the model calls them as `mcp__perdure__<name>`. @default [] */
  tools?: readonly ClaudeSdkTool[];
  /**
   * The tools' own approval, by tool name, since SDK MCP tools carry none: a
   * flag, or a function of the call's input evaluated for each call. A
   * session policy that names only an effect keeps it (the stricter wins).
   * @default {}
   */
  needsApproval?: Readonly<Record<string, ClaudeToolApproval>>;
}

/** Options of {@link ClaudeAgentSdkRunner}. */
export interface ClaudeAgentSdkRunnerOptions {
  /**
   * The SDK's options for every run, such as `model`, `cwd`, `env`,
   * `pathToClaudeCodeExecutable` or `tools` (Claude Code's own tools), or a
   * function that makes them. The runner sets the prompt, resume, session
   * store, `canUseTool`, MCP server `perdure`, system prompt and abort
   * controller itself, and gives the harness a private `CLAUDE_CONFIG_DIR`,
   * plus `CLAUDE_CODE_MAX_RETRIES=0` and
   * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no title request) unless
   * `env` sets them. Options that would let a call skip its tool Step or
   * its approval are refused with a `ClaudeQueryOptionRefusedError`:
   * `canUseTool`, `permissionMode` other than `"default"`,
   * `allowDangerouslySkipPermissions`, `permissionPromptToolName`,
   * `PermissionRequest` and `PreToolUse` hooks, and `allowedTools` naming
   * a tool that is not a read without approval.
   * @default { settingSources: [], tools: [] }
   */
  queryOptions?: Options | (() => Options | Promise<Options>);
  /**
   * Whether a call whose policy is `read` without approval runs inside the
   * harness, in `RunModel`, as the contract says for this adapter. It then
   * reruns whenever `RunModel` reruns (at least once), and its handler sees
   * no `currentToolExecution()`. `false` runs every call in a tool
   * Step.
   * @default true
   */
  readToolsRunInHarness?: boolean;
}

/** What a run that stopped for deferred calls leaves for the next one. */
interface ClaudeRunState {
  /** The UUID of the transcript entry the next run resumes at. */
  resumeAt: string;
}

function readRunState(text: string | null): ClaudeRunState | null {
  if (text === null) return null;
  const state = JSON.parse(text) as Partial<ClaudeRunState>;
  return typeof state.resumeAt === "string" ? { resumeAt: state.resumeAt } : null;
}

/** The run's prompt when it carries the results of deferred calls: one user message of `tool_result` blocks. */
async function* toolResultPrompt(sessionId: string, calls: readonly AgentToolCall[]): AsyncIterable<SDKUserMessage> {
  const content = calls.map((call) => ({ type: "tool_result" as const, tool_use_id: call.toolCallId, content: call.output ?? outcomeUnknownToolResult }));
  yield { type: "user", message: { role: "user", content }, parent_tool_use_id: null, session_id: sessionId };
}

/** The text that starts the turn: its latest user message. */
function turnPromptText(turn: AgentTurnContext): string {
  const userMessage = turn.messages.findLast((message) => message.role === "user" && message.turnId === turn.turnId) ?? turn.messages.findLast((message) => message.role === "user");
  if (userMessage === undefined) throw new Error(`turn ${turn.turnId} has no user message to prompt the harness with`);
  return userMessage.text;
}

/**
 * Runs the Claude Agent SDK's agent loop as the session's runner.
 *
 * @example
 * const runner = new ClaudeAgentSdkRunner({ systemPrompt: "You help customers.", tools: [lookupOrder, refundOrder] }, { queryOptions: { model: "claude-sonnet-5-5" } });
 * export const supportFlow = createAgentSessionFlow(runner, "SupportAgent", { toolPolicies });
 */
export class ClaudeAgentSdkRunner implements AgentFrameworkRunner {
  readonly agent: ClaudeAgentSdkAgent;
  private readonly tools: ReadonlyMap<string, ClaudeSdkTool>;
  private readonly queryOptions: () => Promise<Options>;
  private readonly staticQueryOptions: Options | undefined;
  private readonly readToolsRunInHarness: boolean;
  private readonly approvals: Readonly<Record<string, ClaudeToolApproval>>;
  /** `queryOptions.model` when the options are an object that names one, for `perdure dev`'s banner. */
  readonly modelDescription: string | undefined;
  /** Set on a runner that `withRecordedModel` made: each run of the harness is answered from the recording. */
  private readonly replay: RecordedModelReplay | undefined = undefined;

  constructor(agent: ClaudeAgentSdkAgent, options: ClaudeAgentSdkRunnerOptions = {}) {
    this.agent = agent;
    this.tools = new Map((agent.tools ?? []).map((sdkTool) => [sdkTool.name, sdkTool]));
    this.approvals = agent.needsApproval ?? {};
    for (const [name, approval] of Object.entries(this.approvals)) {
      if (!this.tools.has(name)) throw new TypeError(`needsApproval.${name} names no tool of the agent; its tools are ${[...this.tools.keys()].join(", ") || "none"}`);
      if (typeof approval !== "boolean" && typeof approval !== "function") throw new TypeError(`needsApproval.${name} is invalid: use true, false or a function of the call's input`);
    }
    const queryOptions = options.queryOptions ?? {};
    this.staticQueryOptions = typeof queryOptions === "function" ? undefined : queryOptions;
    this.queryOptions = async () => (typeof queryOptions === "function" ? queryOptions() : queryOptions);
    this.readToolsRunInHarness = options.readToolsRunInHarness ?? true;
    const model = this.staticQueryOptions?.model;
    this.modelDescription = typeof model === "string" && model !== "" ? `anthropic ${model}` : undefined;
  }

  /**
   * Refuses `queryOptions` given as an object that would let a call skip
   * its tool Step or its approval, against the session's policies; options
   * a function makes are checked before each run.
   */
  checkQueryOptions(toolPolicies: Readonly<Record<string, ToolPolicy>>, defaultToolEffect: ToolEffect): void {
    if (this.staticQueryOptions === undefined) return;
    checkClaudeQueryOptions(this.staticQueryOptions, [...this.tools.keys()], (name) => {
      const framework = frameworkPolicyBeforeCalls(this.tools.get(name), this.approvals[name]);
      return framework === undefined && !Object.hasOwn(toolPolicies, name) ? undefined : resolveToolPolicy(name, toolPolicies, defaultToolEffect, framework);
    });
  }

  /** The policy a call of `name` runs under, before any call, or undefined when an approval function decides per call. */
  private policyBeforeCalls(turn: AgentTurnContext, name: string): ResolvedToolPolicy | undefined {
    const framework = frameworkPolicyBeforeCalls(this.tools.get(name), this.approvals[name]);
    return framework === undefined ? undefined : turn.resolveToolPolicy(name, framework);
  }

  /** The policy of one call, with the tool's approval evaluated on its input. */
  private async policyOfCall(turn: AgentTurnContext, name: string, input: unknown): Promise<ResolvedToolPolicy> {
    if (!this.tools.has(name)) return turn.resolveToolPolicy(name);
    return turn.resolveToolPolicy(name, await frameworkPolicyOf(this.tools.get(name), this.approvals[name], input));
  }

  /**
   * A runner of the same agent whose harness runs `replay` answers from a
   * recording, for `replaySession`: each `RunModel` builds the run's
   * request (system prompt, model, tools as the model sees them, prompt)
   * and takes the recorded transcript entries instead of starting the
   * harness. Reads that ran inside the harness are answered by the
   * recording too.
   */
  withRecordedModel(replay: RecordedModelReplay): ClaudeAgentSdkRunner {
    const copy = Object.create(ClaudeAgentSdkRunner.prototype) as ClaudeAgentSdkRunner;
    Object.assign(copy, this, { replay });
    return copy;
  }

  buildUserMessage(text: string): FrameworkMessage {
    return promptMessage(text);
  }

  /** The harness's permission prompt: a read may run in the harness; every other call of this run is deferred. */
  private permissionPrompt(turn: AgentTurnContext, builtIns: ReadonlySet<string>, deferred: { firstToolUseId: string | null }, harnessCalls: HarnessToolCalls): CanUseTool {
    return async (harnessName, input, { toolUseID }) => {
      const name = sessionToolName(harnessName);
      if (deferred.firstToolUseId !== null) return harnessCalls.deferred(toolUseID);
      const sdkTool = this.tools.get(name);
      if (harnessName === name) {
        // One of Claude Code's own tools: it can only run inside the harness, so the session's policy decides now.
        const policy = turn.resolveToolPolicy(name);
        if (policy.requiresApproval) return { behavior: "deny", message: `${name} needs approval, which a durable session cannot ask for inside the Claude Code harness` };
        return harnessCalls.allowed(toolUseID, name, input);
      }
      const policy = await this.policyOfCall(turn, name, input);
      if (this.readToolsRunInHarness && sdkTool !== undefined && !builtIns.has(name) && policy.effect === "read" && !policy.requiresApproval) return harnessCalls.allowed(toolUseID, name, input);
      deferred.firstToolUseId = toolUseID;
      return harnessCalls.deferred(toolUseID);
    };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const sessionId = claudeSessionIdOf(turn.flowId);
    const transcript = transcriptOf(turn.messages);
    const runState = readRunState(turn.frameworkRunState);
    const results = selectUnstoredToolCalls(turn);
    const builtIns = turn.enabledBuiltInTools ?? [];
    const store = new RunSessionStore(sessionId, transcript);
    const deferred: { firstToolUseId: string | null } = { firstToolUseId: null };
    const harnessCalls = new HarnessToolCalls(turn.events);
    const abortController = new AbortController();
    const abort = (): void => abortController.abort(turn.cancellationSignal.reason);
    turn.cancellationSignal.addEventListener("abort", abort, { once: true });
    const userOptions = await this.queryOptions();
    checkClaudeQueryOptions(userOptions, [...this.tools.keys()], (name) => this.policyBeforeCalls(turn, name));
    const resumesWithResults = runState !== null && results.length > 0;
    const request = recordedClaudeRequest({
      systemPrompt: this.agent.systemPrompt, model: userOptions.model, tools: [...this.tools.values()], builtIns,
      prompt: resumesWithResults ? { toolResults: results.map((call) => ({ toolUseId: call.toolCallId, content: call.output ?? outcomeUnknownToolResult })) } : turnPromptText(turn),
    });
    if (this.replay !== undefined) {
      turn.cancellationSignal.removeEventListener("abort", abort);
      const recorded = (await this.replay.respond(turn.turnId, request)) as RecordedClaudeResponse | null;
      return await this.outcome(turn, transcript, recorded?.entries ?? [], recorded?.first_deferred_tool_use_id ?? null, userOptions.model);
    }
    const configDirectory = await createClaudeConfigFolder();
    try {
      const options: Options = {
        settingSources: [],
        tools: [],
        ...userOptions,
        // The session retries RunModel, so the harness does not retry model calls unless the options ask it to;
        // it sends no title or other non-essential request, each a paid call on every rerun.
        env: { ...process.env, CLAUDE_CODE_MAX_RETRIES: "0", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...userOptions.env, CLAUDE_CONFIG_DIR: configDirectory },
        mcpServers: { ...userOptions.mcpServers, perdure: toolServer([...this.tools.values()], builtIns) },
        ...(this.agent.systemPrompt === undefined ? {} : { systemPrompt: this.agent.systemPrompt }),
        canUseTool: this.permissionPrompt(turn, new Set(builtIns.map((definition) => definition.name)), deferred, harnessCalls),
        sessionStore: store,
        abortController,
        ...(transcript.length === 0 ? { sessionId } : { resume: sessionId }),
        ...(resumesWithResults ? { resumeSessionAt: runState.resumeAt } : {}),
      };
      const prompt = resumesWithResults ? toolResultPrompt(sessionId, results) : turnPromptText(turn);
      try {
        for await (const message of query({ prompt, options })) {
          if (message.type === "user" && message.parent_tool_use_id === null) await harnessCalls.results(message.message.content);
          if (message.type !== "assistant" || message.parent_tool_use_id !== null) continue;
          for (const block of message.message.content) {
            if (block.type === "text") await turn.events.textDelta(block.text);
            else if (block.type === "thinking") await turn.events.reasoningDelta(block.thinking);
            else if (block.type === "tool_use") harnessCalls.requested(block.id, block.name, block.input);
          }
        }
      } catch (error) {
        // Denying with interrupt ends the harness's run with an error result; that stop is the deferral.
        if (deferred.firstToolUseId === null) throw error;
      }
      const entries = store.newEntries();
      const modelCall: RecordedModelCall = { request, response: recordedClaudeResponse(entries, deferred.firstToolUseId) };
      return { ...(await this.outcome(turn, transcript, entries, deferred.firstToolUseId, userOptions.model)), modelCall };
    } finally {
      turn.cancellationSignal.removeEventListener("abort", abort);
      await rm(configDirectory, { recursive: true, force: true });
    }
  }

  private async outcome(turn: AgentTurnContext, transcript: ReturnType<typeof transcriptOf>, entries: ReturnType<RunSessionStore["newEntries"]>, firstDeferredToolUseId: string | null, requestModel: string | undefined): Promise<AgentTurnOutcome> {
    const toolNames = new Map(toolUsesOf([...transcript, ...entries]).map((toolUse) => [toolUse.id, sessionToolName(toolUse.name)]));
    const toolNameOf = (toolUseId: string): string => toolNames.get(toolUseId) ?? "";
    const runUsage = usageOfEntries(entries);
    const usage = {
      ...emptyAgentUsage(),
      inputTokens: runUsage.inputTokens,
      outputTokens: runUsage.outputTokens,
      totalTokens: runUsage.inputTokens + runUsage.outputTokens,
      cachedInputTokens: runUsage.cachedInputTokens,
      requests: runUsage.responses,
    };
    const modelCallMetadata = {
      providerName: "anthropic",
      ...(requestModel === undefined ? {} : { requestModel }),
      ...(runUsage.model === undefined ? {} : { responseModel: runUsage.model }),
      ...(runUsage.lastResponseId === undefined ? {} : { responseId: runUsage.lastResponseId }),
    };
    if (firstDeferredToolUseId === null) {
      return { kind: "turn_completed", newMessages: messagesOfEntries(entries, toolNameOf), usage, modelCallMetadata };
    }
    const cut = cutAtDeferral(entries, firstDeferredToolUseId);
    const toolCalls = await Promise.all(cut.deferred.map(async (toolUse): Promise<DeferredToolCall> => {
      const name = sessionToolName(toolUse.name);
      return { toolCallId: toolUse.id, toolName: name, arguments: JSON.stringify(toolUse.input), policy: await this.policyOfCall(turn, name, toolUse.input) };
    }));
    const frameworkRunState = JSON.stringify({ resumeAt: cut.resumeAt } satisfies ClaudeRunState);
    return { kind: "tool_calls_requested", frameworkRunState, toolCalls, usage, newMessages: messagesOfEntries(cut.kept, toolNameOf), modelCallMetadata };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    const sdkTool = this.tools.get(call.toolCall.toolName);
    if (sdkTool === undefined) throw new ToolExecutionError(`the agent has no tool ${call.toolCall.toolName} (the model called ${harnessToolName(call.toolCall.toolName)})`);
    return { output: await executeSdkTool(sdkTool, call) };
  }

  /** The results of the turn's calls not stored yet; without transcript entries, the harness marks such a call interrupted when it resumes. */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    return selectUnstoredToolCalls(turn).map((call) => ({
      role: "tool",
      text: call.output ?? outcomeUnknownToolResult,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      frameworkItem: { kind: "claude_code_transcript", entries: [] },
    }));
  }
}
