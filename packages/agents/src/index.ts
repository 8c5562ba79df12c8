/**
 * `@perdure/agents`: the durable agent session on `@perdure/engine`.
 *
 * A session is a long-lived Flow: each model call and each tool call is its
 * own Step, committed to the store, so a conversation survives crashes and
 * never silently repeats a write. Bring a runner (an agent framework adapter,
 * or the built-in Stepwise loop) and call `createAgentSessionFlow`.
 *
 * @example
 * import { createAgentSessionFlow } from "@perdure/agents";
 * const flow = createAgentSessionFlow(runner, "SupportAgent");
 * const worker = new Worker({ store, flows: [flow] });
 * await client.start(flow, "session-1", {});
 * await client.invokeRPC(flow.sendUserMessage, "session-1", { text: "Where is my order?" });
 */
export { createAgentSessionFlow, describeAgentSessionFeatures, describeAgentSessionModel } from "./session/create-agent-session-flow.ts";
export type { AgentSessionFeatures, AgentSessionFlow } from "./session/create-agent-session-flow.ts";
export type { AgentSessionOptions, CompactionPolicy } from "./session/session-options.ts";
export { QueuedUserMessagesFullError } from "./session/queued-user-messages-full-error.ts";
export type { CompactContextInput } from "./session/steps/compaction-trigger.ts";
export { genAISemanticConventionsSchemaUrls } from "./tracing/agent-tracing-options.ts";
export type { AgentTracingOptions, GenAISemanticConventionsVersion, OpenTelemetryTracerProvider } from "./tracing/agent-tracing-options.ts";
export {
  invalidStartSessionSettingsReason,
  MAX_SESSION_SETTINGS_BYTES,
  SESSION_SETTINGS_SIZE_TOLERANCE_BYTES,
  sessionSettingsSize,
  validateSessionSettings,
} from "./session/settings/session-settings-limits.ts";
export type { SessionSettings, TurnSessionSettings } from "./contract/values/session-settings.ts";
export { contextSummaryFromWire, contextSummaryToWire } from "./contract/values/context-summary.ts";
export type { ContextSummary } from "./contract/values/context-summary.ts";
export type { AgentSessionPersistence } from "./session/persistence.ts";
export { AgentStepType } from "./session/step-types.ts";
export type { ListAgentMessagesInput, ResolveInterruptInput, SendUserMessageInput } from "./session/rpcs/session-rpcs.ts";
export type { AnswerQuestionInput } from "./session/rpcs/answer-question.ts";
export { personLockConflictRetryMs } from "./session/rpcs/person-lock-conflict-retry.ts";
export type { ExecutePlanInput } from "./session/rpcs/execute-plan.ts";
export type { UpdateSessionSettingsInput } from "./session/rpcs/update-session-settings.ts";
export type { CancelTurnInput, DeleteQueuedMessageInput, SteerUserMessageInput } from "./session/rpcs/turn-control-rpcs.ts";
export { toolTaskPollTimerId } from "./session/steps/poll-tool-task.ts";
export {
  toolCallCancellationFromWire,
  toolCallCancellationToWire,
  turnCancellationRequestFromWire,
  turnCancellationRequestToWire,
  turnControlRequestFromWire,
  turnControlRequestToWire,
} from "./contract/values/turn-control.ts";
export type { ToolCallCancellation, ToolCallCancellationReason, TurnCancellationRequest, TurnControlRequest } from "./contract/values/turn-control.ts";
export { builtInToolDefinitions, builtInToolNames } from "./contract/built-in-tool-definitions.ts";
export type { BuiltInToolDefinition, BuiltInToolName } from "./contract/built-in-tool-definitions.ts";
export { durableWaitTimerId } from "./session/built-in-tools/durable-wait-timer.ts";
export { buildPlanNote } from "./contract/plan-note.ts";
export { agentPlanFromWire, agentPlanToWire, planExecutionKey } from "./contract/values/agent-plan.ts";
export type { AgentPlan, AgentPlanStatus, AgentPlanTask, AgentPlanTaskStatus, PlanExecutionRequest } from "./contract/values/agent-plan.ts";
export { agentMessagePageFromWire, agentMessagePageToWire } from "./contract/values/agent-message-page.ts";
export type { AgentMessagePage } from "./contract/values/agent-message-page.ts";
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
} from "./contract/agent-framework-runner.ts";
export { ToolExecutionError } from "./contract/tool-execution-error.ts";
export { currentToolExecution } from "./contract/tool-execution-scope.ts";
export { selectUnstoredToolCalls } from "./contract/unstored-tool-calls.ts";
export { addAgentUsage, agentUsageFromWire, agentUsageToWire, emptyAgentUsage } from "./contract/values/agent-usage.ts";
export type { AgentUsage } from "./contract/values/agent-usage.ts";
export { agentMessageFromWire, agentMessageToWire, messageSequenceKey } from "./contract/values/agent-message.ts";
export type { AgentMessage, AgentMessageRole, FrameworkMessage } from "./contract/values/agent-message.ts";
export { agentMessageChunkFromWire, agentMessageChunkToWire } from "./session/messages/agent-message-chunk.ts";
export type { AgentMessageChunk } from "./session/messages/agent-message-chunk.ts";
export { agentMessageIndexFromWire, agentMessageIndexToWire } from "./session/messages/agent-message-index.ts";
export type { AgentMessageChunkRange, AgentMessageIndex } from "./session/messages/agent-message-index.ts";
export { forkSession } from "./session/fork/fork-session.ts";
export type { ForkSessionOptions, ForkSessionResult } from "./session/fork/fork-session.ts";
export { exportSession } from "./session/export/export-session.ts";
export { checkSessionFixture, sessionFixtureFormat, sessionFixtureVersion } from "./session/export/session-fixture.ts";
export type { SessionFixture, SessionFixtureModelCall, SessionFixtureToolCall, SessionFixtureTurn } from "./session/export/session-fixture.ts";
export { cancelScheduledTurn, scheduleTurn } from "./session/schedules/schedule-turn.ts";
export { parentSessionLinkFromWire, parentSessionLinkToWire } from "./session/sub-agents/parent-session.ts";
export type { ParentSessionLink } from "./session/sub-agents/parent-session.ts";
export type { ScheduledTurnTiming, ScheduleTurnOptions } from "./session/schedules/schedule-turn.ts";
export type { ScheduleTurnInput } from "./session/schedules/scheduled-turn-requests.ts";
export type { CancelScheduledTurnInput } from "./session/schedules/scheduled-turn-rpcs.ts";
export { scheduledTurnTimerId } from "./session/schedules/await-scheduled-turn.ts";
export { scheduledTurnFromWire, scheduledTurnToWire } from "./contract/values/scheduled-turn.ts";
export type { ScheduledTurn, ScheduledTurnMode, ScheduledTurns } from "./contract/values/scheduled-turn.ts";
export { sessionLineageFromWire, sessionLineageToWire } from "./contract/values/session-lineage.ts";
export type { SessionLineage } from "./contract/values/session-lineage.ts";
export { turnCheckpointFromWire, turnCheckpointToWire } from "./session/records/turn-checkpoint.ts";
export type { TurnCheckpoint } from "./session/records/turn-checkpoint.ts";
export { turnToolCallsFromWire, turnToolCallsToWire } from "./session/records/turn-tool-calls.ts";
export type { TurnToolCalls } from "./session/records/turn-tool-calls.ts";
export { modelCallRecordFromWire, modelCallRecordMaxBytes, modelCallRecordToWire } from "./session/records/model-call-record.ts";
export type { ModelCallRecord } from "./session/records/model-call-record.ts";
export { messageRolloverMaxBytesPerCommit, messageRolloverMaxChunksPerCommit } from "./session/messages/message-storage-options.ts";
export { agentStateFromWire, agentStateToWire } from "./contract/values/agent-state.ts";
export type { AgentSessionStartInput, AgentState, AgentStatus, InteractionMode } from "./contract/values/agent-state.ts";
export { agentToolCallFromWire, agentToolCallToWire, finalToolCallStatuses, isFinalToolCallStatus } from "./contract/values/agent-tool-call.ts";
export type { AgentToolCall, AgentToolCallRecord, AgentToolCallRecordStatus, AgentToolCallStatus, QuestionAnswer } from "./contract/values/agent-tool-call.ts";
export { agentInterruptFromWire, agentInterruptToWire, approvalInterruptId, toolInputInterruptId } from "./contract/values/agent-interrupt.ts";
export type { AgentInterrupt, AgentInterruptKind, AgentInterruptResolution } from "./contract/values/agent-interrupt.ts";
export type { AgentUserMessage, QueuedAgentUserMessage, ToolCallCompleted, TurnReplySequence } from "./contract/values/agent-user-message.ts";
export { agentEventFromWire, agentEventToWire } from "./contract/values/agent-event.ts";
export type { AgentEvent, AgentEventType, AgentEventWriter } from "./contract/values/agent-event.ts";
export { agentSnapshotToWire } from "./contract/values/agent-snapshot.ts";
export type { AgentSnapshot } from "./contract/values/agent-snapshot.ts";
export { defaultRequiresApproval, isRetryableEffect, resolveToolPolicy, toolEffects } from "./contract/values/tool-effect.ts";
export type { FrameworkToolPolicy, ResolvedToolPolicy, ToolEffect, ToolPolicy } from "./contract/values/tool-effect.ts";
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
} from "./contract/values/result-texts.ts";
