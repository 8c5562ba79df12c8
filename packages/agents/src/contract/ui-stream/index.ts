/**
 * `@perdure/agents/contract/ui-stream`: the wire shapes a browser reads from
 * an agent session's HTTP API and UI message stream: the data parts, the
 * resume token header, the inspection and session list rows. Types and
 * constants only, with no Node.js or engine imports, so a browser bundle can
 * import its values (`agentResumeTokenHeaderName`, `agentPlanPartId`)
 * without pulling in the session.
 *
 * @example
 * import { agentResumeTokenHeaderName, type AgentQuestionData } from "@perdure/agents/contract/ui-stream";
 */
export { agentPlanPartId } from "./data-parts.ts";
export type {
  AgentDataChunk,
  AgentMcpTaskStatusChunk,
  AgentMcpTaskStatusData,
  AgentMcpToolProgressChunk,
  AgentMcpToolProgressData,
  AgentPlanChunk,
  AgentPlanData,
  AgentQuestionChunk,
  AgentQuestionData,
  AgentQuestionResolution,
  AgentQuestionResolutionChunk,
  AgentQuestionResolutionData,
  AgentQuestionResponseData,
  AgentTimerChunk,
  AgentTimerData,
  AgentToolTaskChunk,
  AgentToolTaskData,
  AgentToolTaskStatus,
  AgentTurnControlChunk,
  AgentTurnControlData,
} from "./data-parts.ts";
export { agentResumeTokenHeaderName, maxAgentUIStreamTokenLength } from "./resume-token.ts";
export { agentEventWriteTimesEventName, inspectedForkScanLimit } from "./session-inspection.ts";
export type {
  AgentInterruptWire,
  AgentPlanWire,
  AgentSessionFeatures,
  AgentSnapshotWire,
  AgentStateWire,
  AgentToolCallWire,
  AgentUsageWire,
  ContextSummaryWire,
  InspectedFork,
  InspectedForks,
  InspectedMessageChunk,
  InspectedMessageStorage,
  ListedSession,
  SessionInspection,
  StoredMessageWire,
  TimelineAttempt,
  TimelineExecution,
  WaitingMessageWire,
} from "./session-inspection.ts";
