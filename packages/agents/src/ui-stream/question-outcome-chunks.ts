import { isFinalToolCallStatus, type AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { questionDeadlinePassed } from "../contract/values/result-texts.ts";
import type { AgentQuestionResolution, AgentQuestionResolutionChunk } from "../contract/ui-stream/data-parts.ts";

function resolutionChunk(interruptId: string, toolCallId: string, resolution: AgentQuestionResolution, rejectionMessage: string | null): AgentQuestionResolutionChunk {
  return { type: "data-agent-question-resolution", id: interruptId, data: { interruptId, toolCallId, resolution, rejectionMessage, cancellationReason: null } };
}

/**
 * The part that tells a browser how a question it answered too late ended,
 * from the call's committed record: an `ask_user` call's final status, or a
 * tool's recorded answers. Undefined while the record is still moving on
 * from the question (its events follow); `no_longer_pending` when nothing
 * committed says.
 */
export function questionOutcomeChunk(interruptId: string, toolCallId: string, record: AgentToolCallRecord | undefined): AgentQuestionResolutionChunk | undefined {
  if (record === undefined) return resolutionChunk(interruptId, toolCallId, "no_longer_pending", null);
  const recorded = record.inputAnswers?.find((answer) => answer.interruptId === interruptId);
  if (recorded !== undefined) return resolutionChunk(interruptId, toolCallId, recorded.resolution, recorded.resolution === "deadline_passed" ? questionDeadlinePassed : null);
  if (!isFinalToolCallStatus(record.status)) return undefined;
  const isAskUser = interruptId === record.toolCallId;
  if (isAskUser && record.status === "succeeded") return resolutionChunk(interruptId, toolCallId, "answered", null);
  if (record.error === questionDeadlinePassed) return resolutionChunk(interruptId, toolCallId, "deadline_passed", questionDeadlinePassed);
  return resolutionChunk(interruptId, toolCallId, record.status === "rejected" ? "declined" : "no_longer_pending", record.status === "rejected" ? record.error : null);
}
