/**
 * The parts of the events that involve a person or time: approvals,
 * questions, durable waits and plan updates
 * (docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md). Each
 * returns false for an event it cannot map, which then travels as a
 * transient `data-agent-event`.
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { chunk, closeOpenParts, enterModelStep, enterStepOfResponse, payloadString, showToolCall } from "./agent-event-part-steps.ts";
import { questionChunkFromPayload, questionResolutionChunkFromPayload, timerChunkFromPayload, toolCallIdOfQuestion } from "./agent-ui-data-parts.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";
import type { PlannedAgentUIPart } from "./planned-agent-ui-part.ts";
import { planToolTaskStatus } from "./tool-task-event-parts.ts";

/** `interrupt_raised`: an approval request on the call's tool part, or a question part after it. */
export function planInterruptRaised(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const interruptId = payloadString(event, "interrupt_id");
  const toolCallId = payloadString(event, "tool_call_id");
  const kind = payloadString(event, "kind");
  if (interruptId === null || toolCallId === null) return false;
  if (kind === "approval") {
    if (enterModelStep(state, event, parts)) {
      closeOpenParts(state, parts);
      showToolCall(state, toolCallId, payloadString(event, "tool_name") ?? "", parts);
      parts.push(chunk({ type: "tool-approval-request", approvalId: interruptId, toolCallId }));
      if (!state.shownApprovalIds.includes(interruptId)) state.shownApprovalIds.push(interruptId);
    }
    return true;
  }
  const question = kind === "question" ? questionChunkFromPayload(event.payload) : undefined;
  if (question === undefined) return false;
  if (enterStepOfResponse(state, event, parts)) {
    showToolCall(state, toolCallId, payloadString(event, "tool_name") ?? "", parts);
    planToolTaskStatus(state, toolCallId, "awaiting_answer", parts);
    parts.push(chunk(question));
    if (!state.shownQuestionIds.includes(interruptId)) state.shownQuestionIds.push(interruptId);
  }
  return true;
}

/** `interrupt_resolved` of an approval or a question this stream showed. */
export function planInterruptResolved(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const interruptId = payloadString(event, "interrupt_id");
  if (interruptId === null) return false;
  if (state.shownApprovalIds.includes(interruptId)) {
    const reason = payloadString(event, "rejection_message");
    parts.push(chunk({ type: "tool-approval-response", approvalId: interruptId, approved: event.payload.approved === true, ...(reason === null ? {} : { reason }) }));
    return true;
  }
  if (!state.shownQuestionIds.includes(interruptId)) return false;
  const resolution = questionResolutionChunkFromPayload(event.payload, toolCallIdOfQuestion(interruptId, null));
  if (resolution === undefined) return false;
  parts.push(chunk(resolution));
  // A task's question never ends its call: the task runs on with the answer, the decline or the passed deadline.
  if (resolution.data.resolution !== "cancelled") planToolTaskStatus(state, resolution.data.toolCallId, "running", parts);
  return true;
}

/** `timer_started`: the durable wait's tool part and its timer part. */
export function planTimerStarted(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const timer = timerChunkFromPayload(event.payload);
  if (timer === undefined) return false;
  if (enterStepOfResponse(state, event, parts)) {
    showToolCall(state, timer.data.toolCallId, "durable_wait", parts);
    parts.push(chunk(timer));
  }
  return true;
}

/** `plan_updated`: a plan part, whose tasks are read when it is sent. */
export function planPlanUpdated(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const { revision, task_count: taskCount } = event.payload;
  const status = payloadString(event, "status");
  if (typeof revision !== "number" || typeof taskCount !== "number" || status === null) return false;
  if (enterStepOfResponse(state, event, parts)) parts.push({ kind: "plan", revision, status, taskCount });
  return true;
}
