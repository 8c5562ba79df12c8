import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent, AgentEventType } from "../values/agent-event.ts";
import {
  planAgentEventParts,
  planAwaitingApprovalParts,
  planTurnEndParts,
  type PlannedAgentUIPart,
} from "./agent-event-parts.ts";
import { initialAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

function event(type: AgentEventType, payload: Record<string, unknown> = {}, step = "model-1", attempt = 1): AgentEvent {
  return { type, turnId: "turn-3", attempt, stepExecutionId: step, payload };
}

/** Plans events one after another; returns each event's parts (shortened) and the final state. */
function plan(events: readonly AgentEvent[], start: AgentUIStreamState = initialAgentUIStreamState()): { parts: string[][]; state: AgentUIStreamState } {
  let state = start;
  const parts: string[][] = [];
  for (const value of events) {
    const planned = planAgentEventParts(state, value);
    parts.push(planned.parts.map(describePart));
    state = planned.state;
  }
  return { parts, state };
}

function describePart(part: PlannedAgentUIPart): string {
  if (part.kind === "tool-input") return `tool-input:${part.toolCallId}`;
  if (part.kind === "tool-output") return `tool-output:${part.toolCallId}:${part.status}`;
  const chunk = part.chunk;
  switch (chunk.type) {
    case "start":
      return `start:${chunk.messageId}`;
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return `${chunk.type}:${chunk.id}`;
    case "text-delta":
    case "reasoning-delta":
      return `${chunk.type}:${chunk.id}:${chunk.delta}`;
    case "tool-approval-request":
      return `approval-request:${chunk.approvalId}`;
    case "tool-approval-response":
      return `approval-response:${chunk.approvalId}:${String(chunk.approved)}:${chunk.reason ?? ""}`;
    case "tool-output-denied":
      return `denied:${chunk.toolCallId}`;
    case "data-agent-event":
      return `event:${chunk.data.type}`;
    case "finish":
      return `finish:${chunk.finishReason}`;
    case "error":
      return `error:${chunk.errorText}`;
    default:
      return chunk.type;
  }
}

describe("event to part table", () => {
  it("maps a model call's deltas to a step with reasoning and text parts, and closes them when the call returns", () => {
    const { parts, state } = plan([
      event("turn_started", { sequence: 5 }, "await"),
      event("reasoning_delta", { text: "Hm" }),
      event("reasoning_delta", { text: "m." }),
      event("text_delta", { text: "Hi" }),
      event("text_delta", { text: "" }),
      event("usage_recorded", { recorded: {}, session: {} }),
    ]);
    assert.deepEqual(parts, [
      ["start:turn-3-assistant"],
      ["start-step", "reasoning-start:reasoning-0", "reasoning-delta:reasoning-0:Hm"],
      ["reasoning-delta:reasoning-0:m."],
      ["reasoning-end:reasoning-0", "text-start:text-1", "text-delta:text-1:Hi"],
      [],
      ["text-end:text-1", "event:usage_recorded"],
    ]);
    assert.equal(state.eventsLost, false);
    assert.equal(state.stepOpen, true);
  });

  it("starts a step per RunModel execution and resets it on a new attempt, dropping older attempts' events", () => {
    const { parts } = plan([
      event("turn_started", {}, "await"),
      event("text_delta", { text: "a" }, "model-1", 1),
      event("text_delta", { text: "b" }, "model-1", 2),
      event("text_delta", { text: "late" }, "model-1", 1),
      event("text_delta", { text: "c" }, "model-2", 1),
    ]);
    assert.deepEqual(parts, [
      ["start:turn-3-assistant"],
      ["start-step", "text-start:text-0", "text-delta:text-0:a"],
      ["reset-step", "text-start:text-1", "text-delta:text-1:b"],
      [],
      ["text-end:text-1", "finish-step", "start-step", "text-start:text-2", "text-delta:text-2:c"],
    ]);
  });

  it("shows tool calls, approvals and results, with text a tool Step writes as a transient event", () => {
    const { parts } = plan([
      event("turn_started", {}, "await"),
      event("text_delta", { text: "Let me" }),
      event("tool_call_deferred", { tool_call_id: "c1", tool_name: "refund", effect: "non_idempotent_write", requires_approval: true }),
      event("interrupt_raised", { interrupt_id: "c1-approval", kind: "approval", tool_call_id: "c1", tool_name: "refund" }),
      event("interrupt_resolved", { interrupt_id: "c1-approval", kind: "approval", approved: false, rejection_message: "no" }, "approval-1"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "refund", status: "rejected" }, "approval-1"),
      event("tool_call_started", { tool_call_id: "c2", tool_name: "lookup" }, "tool-2"),
      event("text_delta", { text: "tool says" }, "tool-2"),
      event("tool_call_finished", { tool_call_id: "c2", tool_name: "lookup", status: "succeeded" }, "tool-2"),
      event("interrupt_resolved", { interrupt_id: "never-raised", kind: "approval", approved: true }, "approval-9"),
      event("timer_started", { tool_call_id: "c3", wait_until: "later", reason: "wait" }, "timer-3"),
    ]);
    assert.deepEqual(parts.slice(1), [
      ["start-step", "text-start:text-0", "text-delta:text-0:Let me"],
      ["text-end:text-0", "tool-input:c1"],
      ["approval-request:c1-approval"],
      ["approval-response:c1-approval:false:no"],
      ["denied:c1"],
      ["event:tool_call_started"],
      ["event:text_delta"],
      ["tool-input:c2", "tool-output:c2:succeeded"],
      ["event:interrupt_resolved"],
      ["event:timer_started"],
    ]);
  });

  it("starts with start and marks the events lost when the first event read is not turn_started", () => {
    const { parts, state } = plan([event("text_delta", { text: "mid" })]);
    assert.deepEqual(parts, [["start:turn-3-assistant", "start-step", "text-start:text-0", "text-delta:text-0:mid"]]);
    assert.equal(state.eventsLost, true);
  });

  it("never changes the state it plans from, so a continuation after a part plans the same parts", () => {
    const before = plan([event("turn_started", {}, "await"), event("text_delta", { text: "a" })]).state;
    const copy = structuredClone(before);
    const first = planAgentEventParts(before, event("text_delta", { text: "b" }, "model-2"));
    const second = planAgentEventParts(before, event("text_delta", { text: "b" }, "model-2"));
    assert.deepEqual(before, copy);
    assert.deepEqual(first, second);
  });

  it("ends a turn by its last end event: stop, error, or other when steered or when events were lost", () => {
    const running = plan([event("turn_started", {}, "await"), event("text_delta", { text: "a" })]).state;
    const end = (type: AgentEventType, payload: Record<string, unknown> = {}, state = running) =>
      planTurnEndParts(plan([event(type, payload, type === "turn_completed" ? "model-1" : "other")], state).state, "turn-3").map((item) => describePart(item.part));
    assert.deepEqual(end("turn_completed", { message_count: 1 }), ["text-end:text-0", "finish-step", "finish:stop"]);
    assert.deepEqual(end("turn_failed", { error: "boom" }), ["text-end:text-0", "finish-step", "error:boom", "finish:error"]);
    assert.deepEqual(end("turn_steered"), ["text-end:text-0", "finish-step", "finish:other"]);
    assert.deepEqual(end("turn_completed", {}, { ...running, eventsLost: true }), ["text-end:text-0", "finish-step", "finish:other"]);
    assert.deepEqual(planTurnEndParts(initialAgentUIStreamState(), "turn-3").map((item) => describePart(item.part)), ["start:turn-3-assistant", "finish:other"]);
    const finished = planTurnEndParts(running, "turn-3").at(-1)?.state;
    assert.equal(finished?.done, true);
    assert.deepEqual(planAgentEventParts(finished ?? running, event("text_delta", { text: "x" })).parts, []);
    assert.deepEqual(planTurnEndParts(finished ?? running, "turn-3"), []);
  });

  it("a new attempt forgets an end event its older attempt wrote", () => {
    const { state } = plan([
      event("turn_started", {}, "await"),
      event("text_delta", { text: "a" }, "model-1", 1),
      event("turn_completed", { message_count: 1 }, "model-1", 1),
      event("text_delta", { text: "b" }, "model-1", 2),
    ]);
    assert.equal(state.turnEnd, null);
  });

  it("finishes with tool-calls after showing pending approvals the stream has not shown", () => {
    const state = plan([
      event("turn_started", {}, "await"),
      event("tool_call_deferred", { tool_call_id: "c1", tool_name: "refund" }),
      event("interrupt_raised", { interrupt_id: "c1-approval", kind: "approval", tool_call_id: "c1", tool_name: "refund" }),
    ]).state;
    const items = planAwaitingApprovalParts(state, "turn-3", [
      { approvalId: "c1-approval", toolCallId: "c1", toolName: "refund" },
      { approvalId: "c2-approval", toolCallId: "c2", toolName: "refund" },
    ]);
    assert.deepEqual(items.map((item) => describePart(item.part)), ["tool-input:c2", "approval-request:c2-approval", "finish-step", "finish:tool-calls"]);
    assert.equal(items.at(-1)?.state.done, false);
    assert.equal(items.at(-1)?.state.stepOpen, false);
  });
});
