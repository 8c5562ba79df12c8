/**
 * Tool tasks and steered or stopped turns in the event-to-part table and in
 * snapshots, on synthetic events shaped as the contract's event table says.
 * docs/decisions/2026-12-03-turn-control-and-tool-tasks-in-ui-streams.md
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { planAgentEventParts, planTurnEndParts, type PlannedAgentUIPart } from "./agent-event-parts.ts";
import { convertAgentSnapshotToUIMessages } from "./agent-ui-messages.ts";
import { initialAgentUIStreamState, parseAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

function event(type: AgentEventType, payload: Record<string, unknown> = {}, step = "model-1", attempt = 1): AgentEvent {
  return { type, turnId: "turn-3", attempt, stepExecutionId: step, payload };
}

function describePart(part: PlannedAgentUIPart): string {
  if (part.kind === "tool-input") return `tool-input:${part.toolCallId}`;
  if (part.kind === "tool-output") return `tool-output:${part.toolCallId}:${part.status}`;
  if (part.kind === "plan") return `plan:${part.revision}`;
  const chunk = part.chunk;
  switch (chunk.type) {
    case "data-agent-tool-task":
      return `task:${chunk.id}:${chunk.data.taskId}:${chunk.data.status}`;
    case "data-agent-turn-control":
      return `turn-control:${chunk.id}:${chunk.data.outcome}:${chunk.data.steeredMessageCount}:${chunk.data.messageCount}`;
    case "data-agent-event":
      return `event:${chunk.data.type}`;
    case "data-agent-question":
    case "data-agent-question-resolution":
      return `${chunk.type}:${chunk.id}`;
    case "text-start":
    case "text-end":
      return `${chunk.type}:${chunk.id}`;
    case "text-delta":
      return `text-delta:${chunk.delta}`;
    case "start":
      return `start:${chunk.messageId}`;
    case "finish":
      return `finish:${chunk.finishReason}`;
    default:
      return chunk.type;
  }
}

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

const taskTurnStart = [
  event("turn_started", { sequence: 1 }, "await"),
  event("text_delta", { text: "Building the report." }),
  event("tool_call_deferred", { tool_call_id: "c1", tool_name: "build_report", effect: "read", requires_approval: false }),
  event("tool_call_started", { tool_call_id: "c1", tool_name: "build_report" }, "tool-1"),
  event("tool_task_started", { tool_call_id: "c1", tool_name: "build_report", task_id: "job-7" }, "tool-1"),
];

describe("tool tasks in the UI message stream", () => {
  it("tool_task_started sends the task part in running after the call's part, and the final status before the call's output", () => {
    const { parts } = plan([...taskTurnStart, event("tool_call_finished", { tool_call_id: "c1", tool_name: "build_report", status: "succeeded" }, "poll-3")]);
    assert.deepEqual(parts.slice(2), [
      ["text-end:text-0", "tool-input:c1"],
      ["event:tool_call_started"],
      ["task:c1:job-7:running"],
      ["task:c1:job-7:succeeded", "tool-output:c1:succeeded"],
    ]);
  });

  it("text a poll writes while the task runs is the tool's (a transient event), not a new model step; after the task ends, a new Step is the next model call", () => {
    const { parts, state } = plan([
      ...taskTurnStart,
      event("text_delta", { text: "42% done" }, "poll-1"),
      event("reasoning_delta", { text: "still going" }, "poll-2"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "build_report", status: "failed" }, "poll-3"),
      event("text_delta", { text: "The report failed." }, "model-2"),
    ]);
    assert.deepEqual(parts.slice(5), [
      ["event:text_delta"],
      ["event:reasoning_delta"],
      ["task:c1:job-7:failed", "tool-output:c1:failed"],
      ["finish-step", "start-step", "text-start:text-1", "text-delta:The report failed."],
    ]);
    assert.deepEqual(state.shownTasks, [], "a new model response forgets the previous response's tasks");
  });

  it("a task's question sends the task part in awaiting_answer, and its answer or decline back in running; a cancelled question leaves it", () => {
    const question = { interrupt_id: "c1-input-1", kind: "question", tool_call_id: "c1", tool_name: "build_report", deadline: null, question: "Which quarter?", choices: ["Q1", "Q2"], allows_free_text: false };
    const { parts } = plan([
      ...taskTurnStart,
      event("interrupt_raised", question, "poll-1"),
      event("interrupt_resolved", { interrupt_id: "c1-input-1", kind: "question", approved: true, answered: true, rejection_message: null, cancellation_reason: null }, "await-answer"),
      event("interrupt_raised", { ...question, interrupt_id: "c1-input-2" }, "poll-2"),
      event("interrupt_resolved", { interrupt_id: "c1-input-2", kind: "question", approved: false, answered: false, rejection_message: null, cancellation_reason: "turn_cancelled" }, "finish-cancel"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "build_report", status: "outcome_unknown" }, "cancel-task"),
    ]);
    assert.deepEqual(parts.slice(5), [
      ["task:c1:job-7:awaiting_answer", "data-agent-question:c1-input-1"],
      ["data-agent-question-resolution:c1-input-1", "task:c1:job-7:running"],
      ["task:c1:job-7:awaiting_answer", "data-agent-question:c1-input-2"],
      ["data-agent-question-resolution:c1-input-2"],
      ["task:c1:job-7:outcome_unknown", "tool-output:c1:outcome_unknown"],
    ]);
  });

  it("a tool_task_started without its IDs travels as a transient event", () => {
    const { parts } = plan([event("turn_started", {}, "await"), event("tool_task_started", { tool_call_id: "c1" }, "tool-1")]);
    assert.deepEqual(parts[1], ["event:tool_task_started"]);
  });

  it("the shown tasks ride in the token state, and a token from before tasks had parts reads as none shown", () => {
    const { state } = plan(taskTurnStart);
    assert.deepEqual(parseAgentUIStreamState(JSON.parse(JSON.stringify(state)))?.shownTasks, [{ toolCallId: "c1", toolName: "build_report", taskId: "job-7", status: "running" }]);
    const older: Record<string, unknown> = { ...state };
    delete older.shownTasks;
    assert.deepEqual(parseAgentUIStreamState(older)?.shownTasks, []);
    assert.equal(parseAgentUIStreamState({ ...state, shownTasks: [{ toolCallId: "c1", status: "exploded" }] }), undefined);
  });
});

describe("steered and stopped turns in the UI message stream", () => {
  const running = plan([event("turn_started", {}, "await"), event("text_delta", { text: "Let me" })]).state;

  it("turn_steered sends a turn-control part with the counts, then the stream ends with other once the end commits", () => {
    const steered = planAgentEventParts(running, event("turn_steered", { steered_message_count: 2, message_count: 1 }, "apply-control"));
    assert.deepEqual(steered.parts.map(describePart), ["turn-control:turn-3-turn-control:steered:2:1"]);
    assert.deepEqual(planTurnEndParts(steered.state, "turn-3").map((item) => describePart(item.part)), ["text-end:text-0", "finish-step", "finish:other"]);
  });

  it("turn_cancelled sends a turn-control part of outcome cancelled, and the stream ends with other", () => {
    const cancelled = planAgentEventParts(running, event("turn_cancelled", { message_count: 0 }, "apply-control"));
    assert.deepEqual(cancelled.parts.map(describePart), ["turn-control:turn-3-turn-control:cancelled:0:0"]);
    assert.equal(cancelled.state.turnEnd?.type, "turn_cancelled");
    assert.deepEqual(planTurnEndParts(cancelled.state, "turn-3").map((item) => describePart(item.part)).at(-1), "finish:other");
  });

  it("counts that are not non-negative integers read as 0", () => {
    const odd = planAgentEventParts(running, event("turn_steered", { steered_message_count: "two", message_count: -1 }, "apply-control"));
    assert.deepEqual(odd.parts.map(describePart), ["turn-control:turn-3-turn-control:steered:0:0"]);
  });
});

describe("tool tasks in stored snapshots", () => {
  function record(toolCallId: string, status: AgentToolCallRecord["status"], extra: Partial<AgentToolCallRecord> = {}): AgentToolCallRecord {
    return { toolCallId, toolName: "build_report", arguments: '{"quarter":"Q3"}', effect: "read", requiresApproval: false, status, output: null, error: null, turnId: "turn-2", deferralOrder: Number(toolCallId.slice(1)), ...extra };
  }

  it("a reloaded page gets a task part after each call that started a task, with its status and poll interval", () => {
    const snapshot: AgentSnapshot = {
      state: { status: "running_tools", activeTurnId: "turn-2", turnCount: 2, messageCount: 1, lastTurnError: null, createdAt: "", updatedAt: "" },
      messages: [{ sequence: 1, role: "user", text: "Build the report", turnId: "turn-2", createdAt: "", frameworkItem: null }],
      pendingInterrupts: [],
      toolCalls: [
        record("c1", "waiting_for_task", { taskId: "job-1", taskPollIntervalSeconds: 5 }),
        record("c2", "awaiting_answer", { taskId: "job-2", taskPollIntervalSeconds: 10 }),
        record("c3", "outcome_unknown", { taskId: "job-3", cancellationReason: "turn_cancelled", output: "unknown" }),
        record("c4", "succeeded", { output: "plain" }),
      ],
      usage: emptyAgentUsage(),
      queuedMessageCount: 0,
      plan: null,
      queuedMessages: [],
      steeredMessages: [],
      contextSummary: null,
    };
    const parts = convertAgentSnapshotToUIMessages(snapshot).at(-1)?.parts ?? [];
    const tasks = parts.filter((part) => part.type === "data-agent-tool-task");
    assert.deepEqual(tasks, [
      { type: "data-agent-tool-task", id: "c1", data: { toolCallId: "c1", toolName: "build_report", taskId: "job-1", status: "running", pollIntervalSeconds: 5, cancellationReason: null } },
      { type: "data-agent-tool-task", id: "c2", data: { toolCallId: "c2", toolName: "build_report", taskId: "job-2", status: "awaiting_answer", pollIntervalSeconds: 10, cancellationReason: null } },
      { type: "data-agent-tool-task", id: "c3", data: { toolCallId: "c3", toolName: "build_report", taskId: "job-3", status: "outcome_unknown", pollIntervalSeconds: null, cancellationReason: "turn_cancelled" } },
    ]);
    // Each task part follows its call's tool part.
    const order = parts.map((part) => (part.type === "dynamic-tool" ? `tool:${part.toolCallId}` : part.type === "data-agent-tool-task" ? `task:${part.id}` : part.type));
    assert.deepEqual(order.slice(-7), ["tool:c1", "task:c1", "tool:c2", "task:c2", "tool:c3", "task:c3", "tool:c4"]);
  });
});
