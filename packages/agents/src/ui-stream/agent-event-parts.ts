/**
 * The contract's event-to-part table as a pure function of the state and one
 * event. The parts an event yields depend only on these two, never on
 * committed state, so a stream that continues after the second part of an
 * event yields exactly the parts the first stream had still to send. Tool
 * arguments and results, which live in committed records, are looked up only
 * when a part is sent ({@link PlannedAgentUIPart}).
 */
import type { AgentEvent } from "../values/agent-event.ts";
import { convertAgentEventToJson } from "./agent-event-json.ts";
import type { AgentUIFinishReason, AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import { copyAgentUIStreamState, type AgentTurnEndEventType, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

/** A final status of `tool_call_finished` whose part carries the record's result. */
export type AgentToolResultStatus = "succeeded" | "failed" | "outcome_unknown";

/** A part to send: ready, or one whose content comes from the committed tool call record. */
export type PlannedAgentUIPart =
  | { kind: "chunk"; chunk: AgentUIMessageChunk }
  | { kind: "tool-input"; toolCallId: string; toolName: string }
  | { kind: "tool-output"; toolCallId: string; toolName: string; status: AgentToolResultStatus };

/** The parts of one event and the state after them. */
export interface PlannedEventParts {
  parts: PlannedAgentUIPart[];
  state: AgentUIStreamState;
}

/** A part that stands alone (not derived from one event), with the state after it. */
export interface PlannedStandalonePart {
  part: PlannedAgentUIPart;
  state: AgentUIStreamState;
}

/** A pending approval the browser must see before the stream finishes with `tool-calls`. */
export interface PendingApprovalCall {
  approvalId: string;
  toolCallId: string;
  toolName: string;
}

/** The assistant message ID of a turn, shared by its live stream and its stored messages. */
export function agentTurnMessageId(turnId: string): string {
  return `${turnId}-assistant`;
}

function chunk(value: AgentUIMessageChunk): PlannedAgentUIPart {
  return { kind: "chunk", chunk: value };
}

function payloadString(event: AgentEvent, key: string): string | null {
  const value = event.payload[key];
  return typeof value === "string" ? value : null;
}

function nextPartId(state: AgentUIStreamState, kind: "text" | "reasoning"): string {
  const id = `${kind}-${state.nextPartNumber}`;
  state.nextPartNumber += 1;
  return id;
}

function closeOpenParts(state: AgentUIStreamState, parts: PlannedAgentUIPart[]): void {
  if (state.textPartId !== null) parts.push(chunk({ type: "text-end", id: state.textPartId }));
  if (state.reasoningPartId !== null) parts.push(chunk({ type: "reasoning-end", id: state.reasoningPartId }));
  state.textPartId = null;
  state.reasoningPartId = null;
}

function forgetModelResponse(state: AgentUIStreamState): void {
  state.toolStepExecutionIds = [];
  state.shownToolCallIds = [];
  state.shownApprovalIds = [];
  state.turnEnd = null;
}

/**
 * Moves to the `RunModel` Step execution and attempt that wrote `event`:
 * `start-step` (after `finish-step`) for a new execution, `reset-step` for a
 * new attempt of the current one. Returns false for an event of an older
 * attempt, whose parts the reset already dropped.
 */
function enterModelStep(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const step = state.step;
  if (step === null || step.executionId !== event.stepExecutionId) {
    closeOpenParts(state, parts);
    if (state.stepOpen) parts.push(chunk({ type: "finish-step" }));
    parts.push(chunk({ type: "start-step" }));
    state.step = { executionId: event.stepExecutionId, attempt: event.attempt };
    state.stepOpen = true;
    forgetModelResponse(state);
    return true;
  }
  if (event.attempt < step.attempt) return false;
  if (event.attempt > step.attempt) {
    // The client drops every part after the step's `step-start`, open ones included.
    parts.push(chunk({ type: "reset-step" }));
    state.textPartId = null;
    state.reasoningPartId = null;
    state.step = { executionId: step.executionId, attempt: event.attempt };
    state.stepOpen = true;
    forgetModelResponse(state);
  }
  return true;
}

function showToolCall(state: AgentUIStreamState, toolCallId: string, toolName: string, parts: PlannedAgentUIPart[]): void {
  if (state.shownToolCallIds.includes(toolCallId)) return;
  parts.push({ kind: "tool-input", toolCallId, toolName });
  state.shownToolCallIds.push(toolCallId);
}

function planDelta(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): void {
  if (state.toolStepExecutionIds.includes(event.stepExecutionId)) {
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
    case "usage_recorded":
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
    case "interrupt_raised": {
      const interruptId = payloadString(event, "interrupt_id");
      const toolCallId = payloadString(event, "tool_call_id");
      if (payloadString(event, "kind") !== "approval" || interruptId === null || toolCallId === null) {
        eventChunk();
      } else if (enterModelStep(next, event, parts)) {
        closeOpenParts(next, parts);
        showToolCall(next, toolCallId, payloadString(event, "tool_name") ?? "", parts);
        parts.push(chunk({ type: "tool-approval-request", approvalId: interruptId, toolCallId }));
        if (!next.shownApprovalIds.includes(interruptId)) next.shownApprovalIds.push(interruptId);
      }
      break;
    }
    case "interrupt_resolved": {
      const interruptId = payloadString(event, "interrupt_id");
      if (interruptId === null || !next.shownApprovalIds.includes(interruptId)) {
        eventChunk();
        break;
      }
      const reason = payloadString(event, "rejection_message");
      parts.push(chunk({ type: "tool-approval-response", approvalId: interruptId, approved: event.payload.approved === true, ...(reason === null ? {} : { reason }) }));
      break;
    }
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
    case "turn_failed":
    case "turn_steered":
    case "turn_cancelled":
      next.turnEnd = { type: event.type, error: event.type === "turn_failed" ? (payloadString(event, "error") ?? "the turn failed").slice(0, 4096) : null };
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
 * The parts that end a stream while the turn waits only for approvals: any
 * approval request the stream has not shown yet, open parts closed, then
 * `finish` with `tool-calls`. The stream can continue after it.
 */
export function planAwaitingApprovalParts(state: AgentUIStreamState, turnId: string, pending: readonly PendingApprovalCall[]): PlannedStandalonePart[] {
  const next = copyAgentUIStreamState(state);
  const items: PlannedStandalonePart[] = [];
  if (next.done) return items;
  planStart(items, next, turnId);
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
