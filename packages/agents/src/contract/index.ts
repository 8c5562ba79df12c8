/**
 * `@perdure/agents/contract`: what a runner, a UI and the session agree on,
 * with nothing else attached. The runner contract (`AgentFrameworkRunner`
 * and its turn, tool and task types), `ToolExecutionError`, the one
 * tool-execution scope (`currentToolExecution`), the session's
 * values with their snake_case wire codecs, the contract's message texts,
 * the built-in tool definitions, the plan note, and the Python-compatible
 * JSON that wire texts use. It imports nothing of this package and only
 * the engine's types and error helpers, so adapters, the web UI and your
 * own code can stand on it without loading a session.
 *
 * @example
 * import { ToolExecutionError, type AgentFrameworkRunner } from "@perdure/agents/contract";
 * class MyRunner implements AgentFrameworkRunner {
 *   // buildUserMessage, runModelStep, executeDeferredToolCall
 * }
 */
export type { SessionSettings, TurnSessionSettings } from "./values/session-settings.ts";
export { contextSummaryFromWire, contextSummaryToWire } from "./values/context-summary.ts";
export type { ContextSummary } from "./values/context-summary.ts";
export {
  toolCallCancellationFromWire,
  toolCallCancellationToWire,
  turnCancellationRequestFromWire,
  turnCancellationRequestToWire,
  turnControlRequestFromWire,
  turnControlRequestToWire,
} from "./values/turn-control.ts";
export type { ToolCallCancellation, ToolCallCancellationReason, TurnCancellationRequest, TurnControlRequest } from "./values/turn-control.ts";
export { builtInToolDefinitions, builtInToolNames } from "./built-in-tool-definitions.ts";
export type { BuiltInToolDefinition, BuiltInToolName } from "./built-in-tool-definitions.ts";
export { buildPlanNote } from "./plan-note.ts";
export { agentPlanFromWire, agentPlanToWire, planExecutionKey } from "./values/agent-plan.ts";
export type { AgentPlan, AgentPlanStatus, AgentPlanTask, AgentPlanTaskStatus, PlanExecutionRequest } from "./values/agent-plan.ts";
export { agentMessagePageFromWire, agentMessagePageToWire } from "./values/agent-message-page.ts";
export type { AgentMessagePage } from "./values/agent-message-page.ts";
export type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  ContextSummaryRequest,
  ContextSummaryResult,
  DeferredToolCall,
  DeferredToolExecution,
  DeferredToolOutcome,
  ModelCallMetadata,
  ToolCallsRequested,
  ToolExecutionResult,
  ToolInputRequested,
  ToolTaskCancellation,
  ToolTaskPending,
  ToolTaskPoll,
  ToolTaskPollOutcome,
  ToolTaskStarted,
  TurnCompleted,
  RecordedModelCall,
  RecordedModelReplay,
  ReplayableAgentFrameworkRunner,
} from "./agent-framework-runner.ts";
export { ToolExecutionError } from "./tool-execution-error.ts";
export { currentToolExecution, runInToolExecution } from "./tool-execution-scope.ts";
export { selectUnstoredToolCalls } from "./unstored-tool-calls.ts";
export { addAgentUsage, agentUsageFromWire, agentUsageToWire, emptyAgentUsage } from "./values/agent-usage.ts";
export type { AgentUsage } from "./values/agent-usage.ts";
export { agentMessageFromWire, agentMessageToWire, messageSequenceKey } from "./values/agent-message.ts";
export type { AgentMessage, AgentMessageRole, FrameworkMessage } from "./values/agent-message.ts";
export { agentStateFromWire, agentStateToWire } from "./values/agent-state.ts";
export type { AgentSessionStartInput, AgentState, AgentStatus, InteractionMode } from "./values/agent-state.ts";
export { agentToolCallFromWire, agentToolCallToWire, finalToolCallStatuses, isFinalToolCallStatus } from "./values/agent-tool-call.ts";
export type { AgentToolCall, AgentToolCallRecord, AgentToolCallRecordStatus, AgentToolCallStatus, QuestionAnswer } from "./values/agent-tool-call.ts";
export { agentInterruptFromWire, agentInterruptToWire, approvalInterruptId, toolInputInterruptId } from "./values/agent-interrupt.ts";
export type { AgentInterrupt, AgentInterruptKind, AgentInterruptResolution } from "./values/agent-interrupt.ts";
export type { AgentUserMessage, QueuedAgentUserMessage, ToolCallCompleted, TurnReplySequence } from "./values/agent-user-message.ts";
export { agentEventFromWire, agentEventToWire } from "./values/agent-event.ts";
export type { AgentEvent, AgentEventType, AgentEventWriter } from "./values/agent-event.ts";
export { agentSnapshotToWire } from "./values/agent-snapshot.ts";
export type { AgentSnapshot } from "./values/agent-snapshot.ts";
export { defaultRequiresApproval, isRetryableEffect, resolveToolPolicy, toolEffects } from "./values/tool-effect.ts";
export type { FrameworkToolPolicy, ResolvedToolPolicy, ToolEffect, ToolPolicy } from "./values/tool-effect.ts";
export {
  approvalDeadlinePassed,
  isBlankText,
  missingToolTaskPoller,
  outcomeUnknownAfterToolErrorPrefix,
  outcomeUnknownAfterToolErrorResult,
  outcomeUnknownToolResult,
  planExecutionUserMessage,
  planningTurnToolRejectedResult,
  questionDeadlinePassed,
  questionDeclinedResult,
  subAgentLimitResult,
  toolCallCancelledBySteeringResult,
  toolCallCancelledByTurnCancellationResult,
  toolCallNotRunErrorPrefix,
  turnCancelledNoteHeader,
  turnSteeredNoteHeader,
} from "./values/result-texts.ts";
export { pythonEquals, pythonJsonDumps, pythonJsonLoads, pythonRepr } from "./python-json.ts";
export type { PythonJsonLoadsResult } from "./python-json.ts";
