/**
 * The contract's event-to-part table as a pure function of the state and one
 * event. The parts an event yields depend only on these two, never on
 * committed state, so a stream that continues after the second part of an
 * event yields exactly the parts the first stream had still to send. Tool
 * arguments and results, which live in committed records, are looked up only
 * when a part is sent ({@link PlannedAgentUIPart}).
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { convertAgentEventToJson } from "./agent-event-json.ts";
import { chunk, closeOpenParts, enterModelStep, payloadString, showToolCall } from "./agent-event-part-steps.ts";
import type { AgentQuestionChunk } from "../contract/ui-stream/data-parts.ts";
import type { AgentUIFinishReason } from "./agent-ui-message-types.ts";
import { copyAgentUIStreamState, type AgentTurnEndEventType, type AgentUIStreamState } from "./agent-ui-stream-state.ts";
import { planInterruptRaised, planInterruptResolved, planPlanUpdated, planTimerStarted } from "./interaction-event-parts.ts";
import { planHarnessToolEvent } from "./harness-tool-event-parts.ts";
import { planMcpEvent } from "./mcp-event-parts.ts";
import { isToolTaskPollOutput, planToolTaskStarted, planToolTaskStatus } from "./tool-task-event-parts.ts";
import { turnControlChunk } from "./turn-control-data-parts.ts";
import type { PendingApprovalCall, PlannedAgentUIPart, PlannedEventParts, PlannedStandalonePart } from "./planned-agent-ui-part.ts";

export type { AgentToolResultStatus, PendingApprovalCall, PlannedAgentUIPart, PlannedEventParts, PlannedStandalonePart } from "./planned-agent-ui-part.ts";

/** The assistant message ID of a turn, shared by its live stream and its stored messages. */
export function agentTurnMessageId(turnId: string): string {
  return `${turnId}-assistant`;
}

function nextPartId(state: AgentUIStreamState, kind: "text" | "reasoning"): string {
  const id = `${kind}-${state.nextPartNumber}`;
  state.nextPartNumber += 1;
  return id;
}

function planDelta(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): void {
  if (state.toolStepExecutionIds.includes(event.stepExecutionId) || isToolTaskPollOutput(state, event)) {
    parts.push(chunk({ type: "data-agent-event", data: convertAgentEventToJson(event), transient: true }));
    return;
  }
  if (!enterModelStep(state, event, parts)) return;
  const text = payloadString(event, "text") ?? "";
  if (text === "") return;
  if (event.type === "text_delta") {
    if (state.reasoningPartId !== null) parts.push(chunk({ type: "reasoning-end", id: state.reasoningPartId }));
    state.reasoningPartId = null;
    if (state.textPartId === null) {
      state.textPartId = nextPartId(state, "text");
      parts.push(chunk({ type: "text-start", id: state.textPartId }));
    }
    parts.push(chunk({ type: "text-delta", id: state.textPartId, delta: text }));
  } else {
    if (state.textPartId !== null) parts.push(chunk({ type: "text-end", id: state.textPartId }));
    state.textPartId = null;
    if (state.reasoningPartId === null) {
      state.reasoningPartId = nextPartId(state, "reasoning");
      parts.push(chunk({ type: "reasoning-start", id: state.reasoningPartId }));
    }
    parts.push(chunk({ type: "reasoning-delta", id: state.reasoningPartId, delta: text }));
  }
}

function planToolCallFinished(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): void {
  const toolCallId = payloadString(event, "tool_call_id");
  const toolName = payloadString(event, "tool_name") ?? "";
  const status = payloadString(event, "status");
  if (toolCallId === null || (status !== "succeeded" && status !== "failed" && status !== "outcome_unknown" && status !== "rejected")) {
    parts.push(chunk({ type: "data-agent-event", data: convertAgentEventToJson(event), transient: true }));
    return;
  }
  showToolCall(state, toolCallId, toolName, parts);
  planToolTaskStatus(state, toolCallId, status, parts);
  parts.push(status === "rejected" ? chunk({ type: "tool-output-denied", toolCallId }) : { kind: "tool-output", toolCallId, toolName, status });
}

/**
 * The parts of one event of the streamed turn, and the state after them. The
 * first event of a stream also yields `start`; when it is not `turn_started`,
 * the turn's earlier events were lost.
 *
 * @example
 * const { parts, state: next } = planAgentEventParts(state, message.value);
 */
export function planAgentEventParts(state: AgentUIStreamState, event: AgentEvent): PlannedEventParts {
  const next = copyAgentUIStreamState(state);
  const parts: PlannedAgentUIPart[] = [];
  const eventChunk = (): void => {
    parts.push(chunk({ type: "data-agent-event", data: convertAgentEventToJson(event), transient: true }));
  };
  if (next.done) return { parts, state: next };
  if (!next.started) {
    parts.push(chunk({ type: "start", messageId: agentTurnMessageId(event.turnId ?? "") }));
    next.started = true;
    if (event.type !== "turn_started") next.eventsLost = true;
  }
  switch (event.type) {
    case "turn_started":
      break;
    case "text_delta":
    case "reasoning_delta":
      planDelta(next, event, parts);
      break;
    case "compaction_started":
      next.compactionStepExecutionId = event.stepExecutionId;
      eventChunk();
      break;
    case "usage_recorded":
      // The summary call's usage is the session's, not a step of the assistant message.
      if (event.stepExecutionId === next.compactionStepExecutionId) {
        eventChunk();
        break;
      }
      // Written once the model call returned: its text and reasoning are complete.
      if (enterModelStep(next, event, parts)) {
        closeOpenParts(next, parts);
        eventChunk();
      }
      break;
    case "tool_call_deferred": {
      const toolCallId = payloadString(event, "tool_call_id");
      if (toolCallId === null) eventChunk();
      else if (enterModelStep(next, event, parts)) {
        closeOpenParts(next, parts);
        showToolCall(next, toolCallId, payloadString(event, "tool_name") ?? "", parts);
      }
      break;
    }
    case "interrupt_raised":
      if (!planInterruptRaised(next, event, parts)) eventChunk();
      break;
    case "interrupt_resolved":
      if (!planInterruptResolved(next, event, parts)) eventChunk();
      break;
    case "timer_started":
      if (!planTimerStarted(next, event, parts)) eventChunk();
      break;
    case "plan_updated":
      if (!planPlanUpdated(next, event, parts)) eventChunk();
      break;
    case "tool_task_started":
      if (!planToolTaskStarted(next, event, parts)) eventChunk();
      break;
    case "mcp.tool_progress":
    case "mcp.task_status":
      if (!planMcpEvent(next, event, parts)) eventChunk();
      break;
    case "harness.tool_call_started":
    case "harness.tool_call_finished":
      if (!planHarnessToolEvent(next, event, parts)) eventChunk();
      break;
    case "tool_call_started":
      if (!next.toolStepExecutionIds.includes(event.stepExecutionId)) next.toolStepExecutionIds.push(event.stepExecutionId);
      eventChunk();
      break;
    case "tool_call_finished":
      planToolCallFinished(next, event, parts);
      break;
    case "turn_completed":
      if (enterModelStep(next, event, parts)) next.turnEnd = { type: "turn_completed", error: null };
      break;
    case "turn_steered":
    case "turn_cancelled":
      // Why the answer stops here; the stream then finishes with `other` once the end commits.
      parts.push(chunk(turnControlChunk(event.turnId ?? "", event.type, event.payload)));
      next.turnEnd = { type: event.type, error: null };
      break;
    case "turn_failed":
      next.turnEnd = { type: event.type, error: (payloadString(event, "error") ?? "the turn failed").slice(0, 4096) };
      break;
    default:
      eventChunk();
  }
  return { parts, state: next };
}

function standalone(items: PlannedStandalonePart[], state: AgentUIStreamState, part: PlannedAgentUIPart): void {
  items.push({ part, state: copyAgentUIStreamState(state) });
}

function planStart(items: PlannedStandalonePart[], state: AgentUIStreamState, turnId: string): void {
  if (state.started) return;
  state.started = true;
  state.eventsLost = true;
  standalone(items, state, chunk({ type: "start", messageId: agentTurnMessageId(turnId) }));
}

function planClosing(items: PlannedStandalonePart[], state: AgentUIStreamState): void {
  if (state.textPartId !== null) {
    const id = state.textPartId;
    state.textPartId = null;
    standalone(items, state, chunk({ type: "text-end", id }));
  }
  if (state.reasoningPartId !== null) {
    const id = state.reasoningPartId;
    state.reasoningPartId = null;
    standalone(items, state, chunk({ type: "reasoning-end", id }));
  }
  if (state.stepOpen) {
    state.stepOpen = false;
    standalone(items, state, chunk({ type: "finish-step" }));
  }
}

function finishReasonOf(state: AgentUIStreamState): AgentUIFinishReason {
  const endType: AgentTurnEndEventType | undefined = state.turnEnd?.type;
  if (endType === "turn_failed") return "error";
  if (state.eventsLost) return "other";
  return endType === "turn_completed" ? "stop" : "other";
}

/**
 * The parts that end a stream once the turn's end committed: open parts
 * closed, `finish-step`, then `finish` with `stop`, or `error` and `finish`
 * with `error`, or `finish` with `other` when events were lost or the turn
 * was steered or cancelled. Each part comes with the state after it.
 */
export function planTurnEndParts(state: AgentUIStreamState, turnId: string): PlannedStandalonePart[] {
  const next = copyAgentUIStreamState(state);
  const items: PlannedStandalonePart[] = [];
  if (next.done) return items;
  planStart(items, next, turnId);
  planClosing(items, next);
  const finishReason = finishReasonOf(next);
  if (finishReason === "error") standalone(items, next, chunk({ type: "error", errorText: next.turnEnd?.error ?? "the turn failed" }));
  next.done = true;
  standalone(items, next, chunk({ type: "finish", finishReason }));
  return items;
}

/**
 * The parts that end a stream while the turn waits only for people: any
 * approval request or question the stream has not shown yet, open parts
 * closed, then `finish` with `tool-calls`. The stream can continue after it.
 */
export function planAwaitingApprovalParts(
  state: AgentUIStreamState,
  turnId: string,
  pending: readonly PendingApprovalCall[],
  questions: readonly AgentQuestionChunk[] = [],
): PlannedStandalonePart[] {
  const next = copyAgentUIStreamState(state);
  const items: PlannedStandalonePart[] = [];
  if (next.done) return items;
  planStart(items, next, turnId);
  for (const question of questions) {
    if (next.shownQuestionIds.includes(question.id)) continue;
    if (!next.shownToolCallIds.includes(question.data.toolCallId)) {
      next.shownToolCallIds.push(question.data.toolCallId);
      standalone(items, next, { kind: "tool-input", toolCallId: question.data.toolCallId, toolName: question.data.toolName });
    }
    next.shownQuestionIds.push(question.id);
    standalone(items, next, chunk(question));
  }
  for (const call of pending) {
    if (next.shownApprovalIds.includes(call.approvalId)) continue;
    if (!next.shownToolCallIds.includes(call.toolCallId)) {
      next.shownToolCallIds.push(call.toolCallId);
      standalone(items, next, { kind: "tool-input", toolCallId: call.toolCallId, toolName: call.toolName });
    }
    next.shownApprovalIds.push(call.approvalId);
    standalone(items, next, chunk({ type: "tool-approval-request", approvalId: call.approvalId, toolCallId: call.toolCallId }));
  }
  planClosing(items, next);
  standalone(items, next, chunk({ type: "finish", finishReason: "tool-calls" }));
  return items;
}

/**
 * The state a new response continues from when the client starts a fresh
 * message state (an approval POST): nothing is open there.
 */
export function closeForNewResponse(state: AgentUIStreamState): AgentUIStreamState {
  return { ...copyAgentUIStreamState(state), textPartId: null, reasoningPartId: null };
}
