import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
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
  if (part.kind === "plan") return `plan:${part.revision}:${part.status}:${part.taskCount}`;
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
    case "data-agent-question":
      return `question:${chunk.id}:${chunk.data.question}`;
    case "data-agent-question-resolution":
      return `question-resolution:${chunk.id}:${chunk.data.resolution}`;
    case "data-agent-timer":
      return `timer:${chunk.id}:${chunk.data.waitUntil}`;
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
      event("compaction_started", { through_sequence: 4 }, "compact-1"),
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
      ["event:compaction_started"],
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

describe("questions, durable waits and plans", () => {
  const question = { interrupt_id: "c1", kind: "question", tool_call_id: "c1", tool_name: "ask_user", deadline: null, question: "Which size?", choices: ["S", "M"], allows_free_text: false };

  it("an ask_user question shows the call's tool part and a question part; its answer a resolution part", () => {
    const { parts, state } = plan([
      event("turn_started", {}, "await"),
      event("text_delta", { text: "One moment" }),
      event("tool_call_deferred", { tool_call_id: "c1", tool_name: "ask_user", effect: "read", requires_approval: false }),
      event("interrupt_raised", question),
      event("interrupt_resolved", { interrupt_id: "c1", kind: "question", approved: true, answered: true, rejection_message: null, cancellation_reason: null }, "await-question-1"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "ask_user", status: "succeeded" }, "await-question-1"),
    ]);
    assert.deepEqual(parts.slice(1), [
      ["start-step", "text-start:text-0", "text-delta:text-0:One moment"],
      ["text-end:text-0", "tool-input:c1"],
      ["question:c1:Which size?"],
      ["question-resolution:c1:answered"],
      ["tool-output:c1:succeeded"],
    ]);
    assert.deepEqual(state.shownQuestionIds, ["c1"]);
  });

  it("a question carries the payload's choices, free-text flag and deadline as camelCase data", () => {
    const start = plan([event("turn_started", {}, "await"), event("tool_call_deferred", { tool_call_id: "c1", tool_name: "ask_user" })]).state;
    const planned = planAgentEventParts(start, event("interrupt_raised", { ...question, deadline: "2026-12-04T10:00:00.000Z" }));
    const part = planned.parts[0];
    assert.ok(part?.kind === "chunk" && part.chunk.type === "data-agent-question");
    assert.deepEqual(part.chunk, {
      type: "data-agent-question",
      id: "c1",
      data: { interruptId: "c1", toolCallId: "c1", toolName: "ask_user", question: "Which size?", choices: ["S", "M"], allowsFreeText: false, deadline: "2026-12-04T10:00:00.000Z" },
    });
  });

  it("a tool's own question, raised by another Step, attaches to the running call without starting a step", () => {
    const { parts, state } = plan([
      event("turn_started", {}, "await"),
      event("tool_call_deferred", { tool_call_id: "c2", tool_name: "book_flight", effect: "non_idempotent_write", requires_approval: false }),
      event("tool_call_started", { tool_call_id: "c2", tool_name: "book_flight" }, "tool-2"),
      event("interrupt_raised", { interrupt_id: "c2-input-1", kind: "question", tool_call_id: "c2", tool_name: "book_flight", deadline: null, question: "Window or aisle?", choices: ["window", "aisle"], allows_free_text: true }, "await-question-2"),
      event("interrupt_resolved", { interrupt_id: "c2-input-1", kind: "question", approved: false, answered: false, rejection_message: "not now", cancellation_reason: null }, "await-question-2"),
    ]);
    assert.deepEqual(parts.slice(1), [
      ["start-step", "tool-input:c2"],
      ["event:tool_call_started"],
      ["question:c2-input-1:Window or aisle?"],
      ["question-resolution:c2-input-1:declined"],
    ]);
    assert.equal(state.step?.executionId, "model-1");
  });

  it("tells a passed deadline and a cancellation from a decline", () => {
    const shown = plan([event("turn_started", {}, "await"), event("interrupt_raised", question)]).state;
    const resolve = (payload: Record<string, unknown>) =>
      planAgentEventParts(shown, event("interrupt_resolved", { interrupt_id: "c1", kind: "question", approved: false, answered: false, ...payload }, "await-question-1")).parts.map(describePart);
    assert.deepEqual(resolve({ rejection_message: "question deadline passed", cancellation_reason: null }), ["question-resolution:c1:deadline_passed"]);
    assert.deepEqual(resolve({ rejection_message: null, cancellation_reason: "steered" }), ["question-resolution:c1:cancelled"]);
    assert.deepEqual(resolve({ rejection_message: null, cancellation_reason: null }), ["question-resolution:c1:declined"]);
    // A resolution of a question this stream never showed stays an event.
    assert.deepEqual(planAgentEventParts(initialAgentUIStreamState(), event("interrupt_resolved", { interrupt_id: "c9", kind: "question", answered: true })).parts.map(describePart).slice(1), ["event:interrupt_resolved"]);
  });

  it("a durable wait shows its tool part and a timer part with its due time", () => {
    const { parts } = plan([
      event("turn_started", {}, "await"),
      event("tool_call_deferred", { tool_call_id: "c3", tool_name: "durable_wait", effect: "read", requires_approval: false }),
      event("timer_started", { tool_call_id: "c3", wait_until: "2026-12-04T10:00:00.000Z", reason: "the carrier updates overnight" }, "timer-3"),
      event("timer_started", { tool_call_id: "c4", wait_until: "2026-12-04T11:00:00.000Z", reason: "again" }, "timer-4"),
      event("timer_started", { reason: "no call" }, "timer-5"),
    ]);
    assert.deepEqual(parts.slice(1), [
      ["start-step", "tool-input:c3"],
      ["timer:c3:2026-12-04T10:00:00.000Z"],
      ["tool-input:c4", "timer:c4:2026-12-04T11:00:00.000Z"],
      ["event:timer_started"],
    ]);
  });

  it("a plan update becomes a plan part whose content is read when it is sent", () => {
    const { parts } = plan([
      event("turn_started", {}, "await"),
      event("tool_call_deferred", { tool_call_id: "c5", tool_name: "write_todos" }),
      event("plan_updated", { revision: 2, status: "draft", task_count: 3 }),
      event("plan_execution_started", { revision: 2 }, "await-2"),
      event("plan_updated", { revision: "two" }),
    ]);
    assert.deepEqual(parts.slice(1), [["start-step", "tool-input:c5"], ["plan:2:draft:3"], ["event:plan_execution_started"], ["event:plan_updated"]]);
  });

  it("a question of an older RunModel attempt is dropped with that attempt", () => {
    const { parts } = plan([
      event("turn_started", {}, "await"),
      event("text_delta", { text: "a" }, "model-1", 2),
      event("interrupt_raised", question, "model-1", 1),
      event("interrupt_raised", question, "model-1", 3),
    ]);
    assert.deepEqual(parts.slice(2), [[], ["reset-step", "tool-input:c1", "question:c1:Which size?"]]);
  });

  it("finishes with tool-calls after showing pending questions and approvals the stream has not shown", () => {
    const state = plan([event("turn_started", {}, "await"), event("tool_call_deferred", { tool_call_id: "c1", tool_name: "ask_user" }), event("interrupt_raised", question)]).state;
    const pendingQuestion = {
      type: "data-agent-question" as const,
      id: "c2-input-1",
      data: { interruptId: "c2-input-1", toolCallId: "c2", toolName: "book_flight", question: "Window?", choices: [], allowsFreeText: true, deadline: null },
    };
    const shownQuestion = { ...pendingQuestion, id: "c1", data: { ...pendingQuestion.data, interruptId: "c1", toolCallId: "c1" } };
    const items = planAwaitingApprovalParts(state, "turn-3", [{ approvalId: "c3-approval", toolCallId: "c3", toolName: "refund" }], [shownQuestion, pendingQuestion]);
    assert.deepEqual(items.map((item) => describePart(item.part)), [
      "tool-input:c2",
      "question:c2-input-1:Window?",
      "tool-input:c3",
      "approval-request:c3-approval",
      "finish-step",
      "finish:tool-calls",
    ]);
    assert.deepEqual(items.at(-1)?.state.shownQuestionIds, ["c1", "c2-input-1"]);
  });
});
