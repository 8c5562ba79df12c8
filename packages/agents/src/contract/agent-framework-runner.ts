/**
 * The runner contract: what an agent framework implements so the session
 * Flow can drive it one model call and one tool call per Step.
 */
import type { AgentEventWriter } from "./values/agent-event.ts";
import type { BuiltInToolDefinition } from "./built-in-tool-definitions.ts";
import type { AgentMessage, FrameworkMessage } from "./values/agent-message.ts";
import type { AgentPlan } from "./values/agent-plan.ts";
import type { InteractionMode } from "./values/agent-state.ts";
import type { AgentToolCall, AgentToolCallRecord, QuestionAnswer } from "./values/agent-tool-call.ts";
import type { AgentUsage } from "./values/agent-usage.ts";
import type { ContextSummary } from "./values/context-summary.ts";
import type { SessionSettings } from "./values/session-settings.ts";
import type { FrameworkToolPolicy, ResolvedToolPolicy, ToolEffect, ToolPolicy } from "./values/tool-effect.ts";

/** Describes the model call for tracing; the session never stores it. */
export interface ModelCallMetadata {
  requestModel?: string;
  responseModel?: string;
  providerName?: string;
  responseId?: string;
  finishReasons?: string[];
}

/** The model gave its final answer. */
export interface TurnCompleted {
  kind: "turn_completed";
  /** Every message of the turn the session has not stored yet, in order. */
  newMessages: FrameworkMessage[];
  /** Usage of this model call only. */
  usage: AgentUsage;
  modelCallMetadata?: ModelCallMetadata;
  /** The model call's request and response as JSON, kept for export and replay (a Perdure extension). @default none */
  modelCall?: RecordedModelCall;
}

/**
 * One model call as the runner made it: the request it sent (instructions,
 * input, tools) and the response it got, both as JSON. The session keeps it
 * in `ModelCalls`, in the same commit as the call's outcome, so
 * `exportSession` can write it and `replaySession` can answer today's code
 * with the recorded response and compare today's request with the recorded
 * one. A Perdure extension of the runner contract.
 */
export interface RecordedModelCall {
  request: unknown;
  response: unknown;
}

/**
 * What `replaySession` gives a runner in place of its model (a Perdure
 * extension): the recording of a session. A runner that takes one
 * ({@link ReplayableAgentFrameworkRunner}) builds each model request as it
 * would for its model, in the JSON form it records as
 * `RecordedModelCall.request`, and answers its framework with the recorded
 * `response` instead of calling the model.
 */
export interface RecordedModelReplay {
  /**
   * The next model call of turn `turnId`, `request` in the runner's recorded
   * form. Resolves with the recorded response when `request` is the
   * recorded one; rejects with a `TerminalError` when it differs or the
   * recording has no such call (the replay has then noted the divergence).
   */
  respond(turnId: string, request: unknown): Promise<unknown>;
}

/** A runner whose model calls a replay can answer from a recording (a Perdure extension). */
export interface ReplayableAgentFrameworkRunner {
  /**
   * A runner like this one whose model calls go to `replay` instead of the
   * model: the same request building, tools and policies, no provider call.
   */
  withRecordedModel(replay: RecordedModelReplay): AgentFrameworkRunner;
}

/** The model asked for tool calls, each of which runs in its own Step. */
export interface ToolCallsRequested {
  kind: "tool_calls_requested";
  /** Non-empty; opaque to the session, handed back in the next `runModelStep`. */
  frameworkRunState: string;
  /** At least one, in the order the model made them. */
  toolCalls: DeferredToolCall[];
  usage: AgentUsage;
  /** Messages to store now, in the same commit as the tool calls. */
  newMessages?: FrameworkMessage[];
  modelCallMetadata?: ModelCallMetadata;
  /** See {@link TurnCompleted.modelCall}. @default none */
  modelCall?: RecordedModelCall;
}

export type AgentTurnOutcome = TurnCompleted | ToolCallsRequested;

/** A tool call the model made, to run in its own Step. */
export interface DeferredToolCall {
  toolCallId: string;
  toolName: string;
  /** JSON text of the arguments. */
  arguments: string;
  policy: ResolvedToolPolicy;
  /** Opaque text stored on the record, so the tool's source resolves it without listing again. */
  toolSourceReference?: string;
  /**
   * The call starts a sub-agent session (`agentTool`), so it counts toward
   * the session's `maxSubAgentsPerTurn`; a call over the limit is recorded
   * as failed and never runs (a Perdure extension). @default false
   */
  startsSubAgent?: boolean;
}

/** What `runModelStep` gets: the committed state of the turn. */
export interface AgentTurnContext {
  flowId: string;
  turnId: string;
  /** The `RunModel` attempt, 1 for the first. */
  attempt: number;
  /** Every stored message, oldest first; rebuild the model input from their `frameworkItem`s only. */
  messages: AgentMessage[];
  /**
   * The active turn's calls so far, from every model response, all final, in
   * `deferralOrder` (the order the model made them across the turn). Empty
   * on the first model call. `selectUnstoredToolCalls(turn)` picks those
   * whose results are not stored messages yet.
   */
  toolCalls: AgentToolCall[];
  /** What the previous `ToolCallsRequested` returned, or null on the first model call. */
  frameworkRunState: string | null;
  interactionMode: InteractionMode;
  /** The effective policy of a tool: session policies, then the framework's, then the default effect. */
  resolveToolPolicy: (toolName: string, frameworkEffect?: ToolEffect | FrameworkToolPolicy) => ResolvedToolPolicy;
  toolPolicies: Readonly<Record<string, ToolPolicy>>;
  defaultToolEffect: ToolEffect;
  events: AgentEventWriter;
  cancellationSignal: AbortSignal;
  deadline: Date;
  stepExecutionId?: string;
  /**
   * Built-in tools to offer the model, from `builtInToolDefinitions`: the
   * session's `builtInTools`, or only `write_todos` in a planning turn. The
   * session always sets it.
   */
  enabledBuiltInTools?: readonly BuiltInToolDefinition[];
  /** The session's plan, or null before `write_todos` first succeeds. The session always sets it. */
  plan?: AgentPlan | null;
  /**
   * The summary of the messages before `messages`, once the session compacted
   * with a compaction policy; null before. Start the model input with it.
   * The session always sets it.
   */
  contextSummary?: ContextSummary | null;
  /**
   * The settings this turn started with (`TurnSessionSettings`), `{}` when
   * there are none. Only model calls see them. The session always sets it.
   */
  sessionSettings?: SessionSettings;
  /** An extra heartbeat; the session already sends one every 20 seconds. */
  heartbeat: () => Promise<void>;
}

/** What `summarizeContext` gets: the messages to fold into the new summary. */
export interface ContextSummaryRequest {
  flowId: string;
  turnId: string;
  /** The `CompactContext` attempt, 1 for the first. */
  attempt: number;
  /** The current summary, which the new one replaces; null on the first compaction. */
  previousSummary: ContextSummary | null;
  /** The messages after the current summary through `throughSequence`, oldest first. */
  messages: AgentMessage[];
  /** The last message sequence the new summary covers. */
  throughSequence: number;
  /** The policy's `contextWindowTokens`: the summary request must fit in it. */
  inputTokenBudget: number;
  /** The turn's settings, as `AgentTurnContext.sessionSettings` carries them. */
  sessionSettings: SessionSettings;
  interactionMode: InteractionMode;
  events: AgentEventWriter;
  cancellationSignal: AbortSignal;
  deadline: Date;
  /** Step execution ID of this `CompactContext`. */
  stepExecutionId: string;
  heartbeat: () => Promise<void>;
}

/** What `summarizeContext` returns. */
export interface ContextSummaryResult {
  /** The summary of everything through `throughSequence`, including the previous summary. */
  summary: string;
  /** Usage of the summary call only. */
  usage: AgentUsage;
  /** Names the summary call's `chat` span; the session never stores it. */
  modelCallMetadata?: ModelCallMetadata;
}

/** What `executeDeferredToolCall` gets. */
export interface DeferredToolExecution {
  flowId: string;
  toolCall: AgentToolCall;
  /** `<flowId>/<turnId>/<toolCallId>`, the same on every attempt: pass it to the system the tool writes to. */
  idempotencyKey: string;
  attempt: number;
  events: AgentEventWriter;
  cancellationSignal: AbortSignal;
  deadline: Date;
  heartbeat: () => Promise<void>;
  /** The checkpoint an earlier attempt of this call saved, if any. */
  heartbeatCheckpoint: string | undefined;
  /** Records a heartbeat that carries `text`; a retried attempt reads it as `heartbeatCheckpoint`. */
  saveHeartbeatCheckpoint: (text: string) => Promise<void>;
  /**
   * The answers to the questions this call's tool asked, oldest first; empty
   * on its first run. `toolCall.inputContinuation` holds the continuation of
   * the latest one. The session always sets it.
   */
  inputAnswers?: QuestionAnswer[];
  /** Whether the runner polls tool tasks (has `pollToolTask`), so a tool may return `ToolTaskStarted`. The session always sets it. */
  supportsToolTasks?: boolean;
}

/**
 * The tool started remote work the session polls through `pollToolTask`.
 * Save `taskId` with `saveHeartbeatCheckpoint` before returning it, and
 * return the saved one when `heartbeatCheckpoint` holds it.
 */
export interface ToolTaskStarted {
  kind: "tool_task_started";
  /** The remote work's handle, non-empty; stored as the record's `taskId`. */
  taskId: string;
  /** Seconds until the first poll; rounded up to a whole number from 1 to 86,400. */
  pollIntervalSeconds: number;
}

/** The task still runs: poll again after the interval. */
export interface ToolTaskPending {
  kind: "tool_task_pending";
  /** Seconds until the next poll; rounded up to a whole number from 1 to 86,400. */
  pollIntervalSeconds: number;
  /** Stored as `inputContinuation` for the next poll; omitted or null clears it. @default null */
  continuation?: string | null;
}

/** What `pollToolTask` gets. */
export interface ToolTaskPoll {
  flowId: string;
  /** The call's stored record, status `waiting_for_task`, with `taskId`. */
  toolCall: AgentToolCallRecord;
  /** `<flowId>/<turnId>/<toolCallId>`, as the tool Step had it. */
  idempotencyKey: string;
  attempt: number;
  /**
   * The resolution of the task's question, on the first poll after it (and
   * its retries); null on every other poll.
   */
  pendingAnswer: QuestionAnswer | null;
  events: AgentEventWriter;
  cancellationSignal: AbortSignal;
  deadline: Date;
  heartbeat: () => Promise<void>;
}

/** What `pollToolTask` returns: the result, the task's question, or pending. */
export type ToolTaskPollOutcome = ToolExecutionResult | ToolInputRequested | ToolTaskPending;

/** What `cancelToolTask` gets: the abandoned call's record, with `taskId`. */
export interface ToolTaskCancellation {
  flowId: string;
  toolCall: AgentToolCallRecord;
  idempotencyKey: string;
  attempt: number;
  cancellationSignal: AbortSignal;
  deadline: Date;
}

/**
 * Asks the user a question before the tool takes any effect. The session
 * raises it as interrupt `<toolCallId>-input-<n>` and, once answered, runs the
 * call again with the answer in `inputAnswers`.
 */
export interface ToolInputRequested {
  kind: "tool_input_requested";
  question: string;
  /** Answers the user can pick from. @default none: free text */
  choices?: string[] | null;
  /** @default true without choices, false with them */
  allowsFreeText?: boolean | null;
  /** Opaque text handed back as `toolCall.inputContinuation` on the next run. @default none */
  continuation?: string | null;
}

/** What `executeDeferredToolCall` returns in a runner whose tools may ask for input. */
export type DeferredToolOutcome = ToolExecutionResult | ToolInputRequested | ToolTaskStarted;

/** A tool's result: the text recorded and shown to the model. */
export interface ToolExecutionResult {
  output: string;
  /**
   * Model usage the tool's work spent elsewhere, such as a sub-agent
   * session's (`agentTool`), added to this session's `AgentUsage` when a tool
   * task's poll returns the result (a Perdure extension). @default none
   */
  usage?: AgentUsage;
}

/**
 * What an agent framework implements. The session stores messages, records
 * and usage; the runner turns them into model input and tool calls.
 */
export interface AgentFrameworkRunner<TToolOutcome = ToolExecutionResult> {
  /** Wraps a user's text as a framework message. */
  buildUserMessage(text: string): FrameworkMessage;
  /** Makes one model call from committed state. Throw for an unexpected failure: the call reruns. */
  runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome>;
  /** Runs one tool call. Throw `ToolExecutionError` for a failure the model should see. */
  executeDeferredToolCall(call: DeferredToolExecution): Promise<TToolOutcome>;
  /** The messages a failed or ended turn stores before its note, such as stored calls' results. */
  buildUnfinishedTurnMessages?(turn: AgentTurnContext): FrameworkMessage[];
  /**
   * Polls a task a tool started (`ToolTaskStarted`), once per `PollToolTask`
   * execution. Only read the task, or deliver `pendingAnswer` idempotently:
   * a crash repeats the poll.
   */
  pollToolTask?(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome>;
  /** Stops an abandoned task best-effort; idempotent by `taskId`, because a failed attempt calls it again. */
  cancelToolTask?(cancellation: ToolTaskCancellation): Promise<void>;
  /**
   * The model input's size in tokens for the next `runModelStep(turn)`, which
   * `RunModel` asks before each model call under a compaction policy.
   * Compaction needs all three of this, `selectCompactionCutoff` and
   * `summarizeContext`.
   */
  estimateInputTokens?(turn: AgentTurnContext): number | Promise<number>;
  /**
   * The sequence of the last message to summarize, so that the messages
   * after it fit in `retainedTokenBudget`; null (or a sequence the summary
   * already covers) when nothing can be cut. Cut only where no tool call is
   * separated from its result.
   */
  selectCompactionCutoff?(turn: AgentTurnContext, retainedTokenBudget: number): number | null | Promise<number | null>;
  /** Makes one summary call in `CompactContext`. Throw for an unexpected failure: the call reruns. */
  summarizeContext?(request: ContextSummaryRequest): Promise<ContextSummaryResult>;
  /**
   * Which model the runner calls, for people (`perdure dev`'s start banner).
   * A Perdure extension; `describeAgentSessionModel(flow)` reads it.
   * @default none
   */
  readonly modelDescription?: string | undefined;
  /**
   * The names the runner accepts as `sessionSettings.model`, first the
   * default, for a per-session model picker such as `perdure dev`'s. A
   * Perdure extension; `describeAgentSessionFeatures(flow).modelChoices` reads it.
   * @default none
   */
  readonly modelChoices?: readonly string[] | undefined;
  /**
   * Whether the runner offers only `write_todos` in a planning turn, which
   * `planModeEnabled` needs.
   * @default false
   */
  readonly supportsPlanMode?: boolean;
}
