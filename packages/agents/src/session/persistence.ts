import { attribute, attributeMap, channel, channelMap, stream, type Codec } from "@perdure/engine";
import { agentEventFromWire, agentEventToWire, type AgentEvent } from "../contract/values/agent-event.ts";
import { agentInterruptFromWire, agentInterruptResolutionFromWire, agentInterruptResolutionToWire, agentInterruptToWire, type AgentInterrupt, type AgentInterruptResolution } from "../contract/values/agent-interrupt.ts";
import { sessionSettingsFromWire, turnSessionSettingsFromWire, turnSessionSettingsToWire, type SessionSettings, type TurnSessionSettings } from "../contract/values/session-settings.ts";
import { contextSummaryFromWire, contextSummaryToWire, type ContextSummary } from "../contract/values/context-summary.ts";
import { agentPlanFromWire, agentPlanToWire, planExecutionRequestFromWire, planExecutionRequestToWire, type AgentPlan, type PlanExecutionRequest } from "../contract/values/agent-plan.ts";
import { agentMessageFromWire, agentMessageToWire, type AgentMessage } from "../contract/values/agent-message.ts";
import { agentStateFromWire, agentStateToWire, type AgentState } from "../contract/values/agent-state.ts";
import { agentToolCallFromWire, agentToolCallToWire, type AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { agentUsageFromWire, agentUsageToWire, type AgentUsage } from "../contract/values/agent-usage.ts";
import {
  agentUserMessageFromWire,
  storedAgentUserMessageToWire,
  toolCallCompletedFromWire,
  toolCallCompletedToWire,
  type AgentUserMessage,
  type ToolCallCompleted,
  type TurnReplySequence,
} from "../contract/values/agent-user-message.ts";
import {
  toolCallCancellationFromWire,
  toolCallCancellationToWire,
  turnCancellationRequestFromWire,
  turnCancellationRequestToWire,
  turnControlRequestFromWire,
  turnControlRequestToWire,
  type ToolCallCancellation,
  type TurnCancellationRequest,
  type TurnControlRequest,
} from "../contract/values/turn-control.ts";
import { asWireObject, readNumber, readString } from "../contract/values/wire.ts";
import { agentMessageChunkFromWire, agentMessageChunkToWire, type AgentMessageChunk } from "./messages/agent-message-chunk.ts";
import { agentMessageIndexFromWire, agentMessageIndexToWire, type AgentMessageIndex } from "./messages/agent-message-index.ts";
import { resolveMessageStorageOptions, type MessageStorageOptions } from "./messages/message-storage-options.ts";
import { registerMessageStorageOptions } from "./messages/message-storage-registry.ts";
import { modelCallRecordFromWire, modelCallRecordToWire, type ModelCallRecord } from "./records/model-call-record.ts";
import { turnCheckpointFromWire, turnCheckpointToWire, type TurnCheckpoint } from "./records/turn-checkpoint.ts";
import { turnToolCallsFromWire, turnToolCallsToWire, type TurnToolCalls } from "./records/turn-tool-calls.ts";
import { sessionLineageFromWire, sessionLineageToWire, type SessionLineage } from "../contract/values/session-lineage.ts";
import { parentSessionLinkFromWire, parentSessionLinkToWire, type ParentSessionLink } from "./sub-agents/parent-session.ts";
import { scheduledTurnsFromWire, scheduledTurnsToWire, type ScheduledTurns } from "../contract/values/scheduled-turn.ts";

function codec<TValue>(encode: (value: TValue) => unknown, decode: (data: unknown) => TValue): Codec<TValue> {
  return { encode, decode };
}

const turnReplySequenceCodec = codec<TurnReplySequence>(
  (value) => ({ turn_id: value.turnId, sequence: value.sequence }),
  (data) => {
    const object = asWireObject(data, "TurnReplySequence");
    return { turnId: readString(object, "turn_id", ""), sequence: readNumber(object, "sequence", 1) };
  },
);

/**
 * Builds the session's persistence definitions under the contract's names.
 * Values are stored as the contract's snake_case wire JSON and read as
 * camelCase TypeScript values.
 */
export function createAgentSessionPersistence(options: { eventStreamCapacityBytes: number } & MessageStorageOptions) {
  const persistence = {
    agentState: attribute<AgentState>("AgentState", { codec: codec(agentStateToWire, agentStateFromWire) }),
    agentMessages: attributeMap<AgentMessage>("AgentMessages", { codec: codec(agentMessageToWire, agentMessageFromWire) }),
    agentMessageChunks: attributeMap<AgentMessageChunk>("AgentMessageChunks", { codec: codec(agentMessageChunkToWire, agentMessageChunkFromWire) }),
    agentMessageIndex: attribute<AgentMessageIndex>("AgentMessageIndex", { codec: codec(agentMessageIndexToWire, agentMessageIndexFromWire) }),
    turnReplySequence: attribute<TurnReplySequence>("TurnReplySequence", { codec: turnReplySequenceCodec }),
    frameworkRunState: attribute<string>("FrameworkRunState"),
    agentToolCalls: attributeMap<AgentToolCallRecord>("AgentToolCalls", { codec: codec(agentToolCallToWire, agentToolCallFromWire) }),
    /**
     * A Perdure extension: the approval ID of each call a person approved,
     * by tool call ID, kept when its turn's records are cleared, so a
     * reloaded chat still shows the approval.
     */
    approvedToolCalls: attributeMap<string>("ApprovedToolCalls"),
    /**
     * A Perdure extension: the client's ID of each user message sent with
     * one (`clientMessageId`), keyed by the message's sequence key.
     */
    userMessageClientIds: attributeMap<string>("UserMessageClientIds"),
    pendingInterrupts: attribute<AgentInterrupt[]>("PendingInterrupts", {
      codec: codec((values) => values.map(agentInterruptToWire), (data) => (Array.isArray(data) ? data.map(agentInterruptFromWire) : [])),
    }),
    agentUsage: attribute<AgentUsage>("AgentUsage", { codec: codec(agentUsageToWire, agentUsageFromWire) }),
    queuedUserMessages: channel<AgentUserMessage>("QueuedUserMessages", { codec: codec(storedAgentUserMessageToWire, agentUserMessageFromWire) }),
    interruptResolutions: channelMap<AgentInterruptResolution>("InterruptResolutions", {
      codec: codec(agentInterruptResolutionToWire, agentInterruptResolutionFromWire),
    }),
    toolCallResults: channel<ToolCallCompleted>("ToolCallResults", { codec: codec(toolCallCompletedToWire, toolCallCompletedFromWire) }),
    steeredUserMessages: channel<AgentUserMessage>("SteeredUserMessages", { codec: codec(storedAgentUserMessageToWire, agentUserMessageFromWire) }),
    turnControlRequests: channel<TurnControlRequest>("TurnControlRequests", { codec: codec(turnControlRequestToWire, turnControlRequestFromWire) }),
    turnCancellationRequest: attribute<TurnCancellationRequest>("TurnCancellationRequest", {
      codec: codec(turnCancellationRequestToWire, turnCancellationRequestFromWire),
    }),
    toolCallCancellations: channelMap<ToolCallCancellation>("ToolCallCancellations", { codec: codec(toolCallCancellationToWire, toolCallCancellationFromWire) }),
    agentPlan: attribute<AgentPlan>("AgentPlan", { codec: codec(agentPlanToWire, agentPlanFromWire) }),
    planExecutions: channelMap<PlanExecutionRequest>("PlanExecutions", { codec: codec(planExecutionRequestToWire, planExecutionRequestFromWire) }),
    pendingPlanExecution: attribute<PlanExecutionRequest>("PendingPlanExecution", { codec: codec(planExecutionRequestToWire, planExecutionRequestFromWire) }),
    contextSummary: attribute<ContextSummary>("ContextSummary", { codec: codec(contextSummaryToWire, contextSummaryFromWire) }),
    sessionSettings: attribute<SessionSettings>("SessionSettings", { codec: codec((value) => value, sessionSettingsFromWire) }),
    turnSessionSettings: attribute<TurnSessionSettings>("TurnSessionSettings", { codec: codec(turnSessionSettingsToWire, turnSessionSettingsFromWire) }),
    agentTraceContext: attribute<string>("AgentTraceContext"),
    turnCheckpoints: attributeMap<TurnCheckpoint>("TurnCheckpoints", { codec: codec(turnCheckpointToWire, turnCheckpointFromWire) }),
    turnToolCalls: attributeMap<TurnToolCalls>("TurnToolCalls", { codec: codec(turnToolCallsToWire, turnToolCallsFromWire) }),
    modelCalls: attributeMap<ModelCallRecord>("ModelCalls", { codec: codec(modelCallRecordToWire, modelCallRecordFromWire) }),
    sessionLineage: attribute<SessionLineage>("SessionLineage", { codec: codec(sessionLineageToWire, sessionLineageFromWire) }),
    /** The session's scheduled turns (a Perdure extension); small, so a plain Attribute every Step may read. */
    /** Set on a sub-agent session: the parent and the tool call that wait for it (a Perdure extension). */
    parentSession: attribute<ParentSessionLink>("ParentSession", { codec: codec(parentSessionLinkToWire, parentSessionLinkFromWire) }),
    scheduledTurns: attribute<ScheduledTurns>("ScheduledTurns", { codec: codec(scheduledTurnsToWire, scheduledTurnsFromWire) }),
    agentEvents: stream<AgentEvent>("AgentEvents", {
      capacityBytes: options.eventStreamCapacityBytes,
      codec: codec(agentEventToWire, agentEventFromWire),
    }),
  };
  registerMessageStorageOptions(persistence, resolveMessageStorageOptions(options));
  return persistence;
}

/** The session's persistence definitions. */
export type AgentSessionPersistence = ReturnType<typeof createAgentSessionPersistence>;
