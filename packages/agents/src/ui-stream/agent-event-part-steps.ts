/**
 * The bookkeeping every planner of the event-to-part table shares: which
 * `RunModel` execution and attempt the parts belong to, the open text and
 * reasoning parts, and the tool calls the browser holds a part for.
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";
import type { PlannedAgentUIPart } from "./planned-agent-ui-part.ts";

/** A part that is ready to send as it is. */
export function chunk(value: AgentUIMessageChunk): PlannedAgentUIPart {
  return { kind: "chunk", chunk: value };
}

/** A string field of the event's payload, or null when it is absent or not a string. */
export function payloadString(event: AgentEvent, key: string): string | null {
  const value = event.payload[key];
  return typeof value === "string" ? value : null;
}

/** Ends the open text and reasoning parts. */
export function closeOpenParts(state: AgentUIStreamState, parts: PlannedAgentUIPart[]): void {
  if (state.textPartId !== null) parts.push(chunk({ type: "text-end", id: state.textPartId }));
  if (state.reasoningPartId !== null) parts.push(chunk({ type: "reasoning-end", id: state.reasoningPartId }));
  state.textPartId = null;
  state.reasoningPartId = null;
}

/** Forgets what the browser holds of the previous model response: a new step starts. */
export function forgetModelResponse(state: AgentUIStreamState): void {
  state.toolStepExecutionIds = [];
  state.shownToolCallIds = [];
  state.shownApprovalIds = [];
  state.shownQuestionIds = [];
  state.shownTasks = [];
  state.turnEnd = null;
}

/**
 * Moves to the `RunModel` Step execution and attempt that wrote `event`:
 * `start-step` (after `finish-step`) for a new execution, `reset-step` for a
 * new attempt of the current one. Returns false for an event of an older
 * attempt, whose parts the reset already dropped.
 */
export function enterModelStep(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
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

/**
 * For an event that a model call or another Step of its response may write
 * (a question, a timer, a plan): follows the model step when the event is
 * the current `RunModel` execution's, else leaves the step alone. False for
 * an event of an older attempt, whose parts the reset already dropped.
 */
export function enterStepOfResponse(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  if (state.step?.executionId !== event.stepExecutionId) return true;
  if (!enterModelStep(state, event, parts)) return false;
  closeOpenParts(state, parts);
  return true;
}

/** Plans the call's tool part once per model response; its input is read when it is sent. */
export function showToolCall(state: AgentUIStreamState, toolCallId: string, toolName: string, parts: PlannedAgentUIPart[]): void {
  if (state.shownToolCallIds.includes(toolCallId)) return;
  parts.push({ kind: "tool-input", toolCallId, toolName });
  state.shownToolCallIds.push(toolCallId);
}
