/**
 * MCP progress and task status in the event-to-part table, on synthetic
 * events shaped as `@perdure/agents/mcp` writes them, and in the AI SDK's
 * own message assembly: each call keeps one progress part and one status
 * part, the latest.
 * docs/decisions/2026-12-03-mcp-events-in-ui-streams.md
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import { planAgentEventParts, type PlannedAgentUIPart } from "./agent-event-parts.ts";
import { initialAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";

function event(type: AgentEventType, payload: Record<string, unknown> = {}, step = "model-1", attempt = 1): AgentEvent {
  return { type, turnId: "turn-2", attempt, stepExecutionId: step, payload };
}

function plan(events: readonly AgentEvent[], start: AgentUIStreamState = initialAgentUIStreamState()): { parts: PlannedAgentUIPart[][]; state: AgentUIStreamState } {
  let state = start;
  const parts: PlannedAgentUIPart[][] = [];
  for (const value of events) {
    const planned = planAgentEventParts(state, value);
    parts.push(planned.parts);
    state = planned.state;
  }
  return { parts, state };
}

function describePart(part: PlannedAgentUIPart): string {
  if (part.kind === "tool-input") return `tool-input:${part.toolCallId}:${part.toolName}`;
  if (part.kind === "tool-output") return `tool-output:${part.toolCallId}:${part.status}`;
  if (part.kind === "plan") return `plan:${part.revision}`;
  const chunk = part.chunk;
  if (chunk.type === "data-agent-mcp-tool-progress") return `progress:${chunk.id}:${chunk.data.progress}/${String(chunk.data.total)}:${String(chunk.data.message)}${chunk.data.attempt > 1 ? `@${chunk.data.attempt}` : ""}`;
  if (chunk.type === "data-agent-mcp-task-status") return `task-status:${chunk.id}:${chunk.data.taskId}:${chunk.data.status}:${String(chunk.data.statusMessage)}`;
  if (chunk.type === "data-agent-event") return `event:${chunk.data.type}`;
  return chunk.type;
}

const progressPayload = (progress: number, message: string | null, total: number | null = 2) => ({
  tool_call_id: "c1", tool_name: "notes__list_notes", server: "notes", progress, total, message,
});

const callStart = [
  event("turn_started", { sequence: 3 }, "await"),
  event("tool_call_deferred", { tool_call_id: "c1", tool_name: "notes__list_notes", effect: "read", requires_approval: false }),
  event("tool_call_started", { tool_call_id: "c1", tool_name: "notes__list_notes" }, "tool-1"),
];

describe("MCP tool progress in the UI message stream", () => {
  it("each mcp.tool_progress sends the call's progress part, with the tool call ID as its id, after the call's tool part", () => {
    const { parts } = plan([
      ...callStart,
      event("mcp.tool_progress", progressPayload(1, "read returns"), "tool-1"),
      event("mcp.tool_progress", progressPayload(2, "read shipping"), "tool-1"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "notes__list_notes", status: "succeeded" }, "tool-1"),
    ]);
    assert.deepEqual(parts.slice(1).map((planned) => planned.map(describePart)), [
      ["start-step", "tool-input:c1:notes__list_notes"],
      ["event:tool_call_started"],
      ["progress:c1:1/2:read returns"],
      ["progress:c1:2/2:read shipping"],
      ["tool-output:c1:succeeded"],
    ]);
    const progress = parts[3]?.[0];
    assert.deepEqual(progress?.kind === "chunk" ? progress.chunk : undefined, {
      type: "data-agent-mcp-tool-progress",
      id: "c1",
      data: { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", progress: 1, attempt: 1, total: 2, message: "read returns" },
    });
  });

  it("a read retried after a crash reports its progress again from 1, and each part carries the attempt that reported it", () => {
    const { parts } = plan([
      ...callStart,
      event("mcp.tool_progress", progressPayload(1, null), "tool-1", 1),
      event("mcp.tool_progress", progressPayload(2, null), "tool-1", 1),
      event("tool_call_started", { tool_call_id: "c1", tool_name: "notes__list_notes" }, "tool-1", 2),
      event("mcp.tool_progress", progressPayload(1, null), "tool-1", 2),
      event("mcp.tool_progress", progressPayload(2, null), "tool-1", 2),
    ]);
    assert.deepEqual(parts.slice(3).flat().map(describePart).filter((part) => part.startsWith("progress")), [
      "progress:c1:1/2:null",
      "progress:c1:2/2:null",
      "progress:c1:1/2:null@2",
      "progress:c1:2/2:null@2",
    ]);
  });

  it("a progress event of a call the stream has not shown (its earlier events were lost) shows the call's tool part first, once", () => {
    const { parts } = plan([
      event("mcp.tool_progress", progressPayload(1, null, null), "tool-1"),
      event("mcp.tool_progress", progressPayload(2, null, null), "tool-1"),
    ]);
    assert.deepEqual(parts.map((planned) => planned.map(describePart)), [
      ["start", "tool-input:c1:notes__list_notes", "progress:c1:1/null:null"],
      ["progress:c1:2/null:null"],
    ]);
  });

  it("a progress payload without its call ID or a numeric progress travels as a transient event", () => {
    const { parts } = plan([
      ...callStart,
      event("mcp.tool_progress", { ...progressPayload(1, "x"), tool_call_id: 7 }, "tool-1"),
      event("mcp.tool_progress", { ...progressPayload(1, "x"), progress: "half" }, "tool-1"),
      event("mcp.tool_progress", { ...progressPayload(1, "x"), progress: Number.NaN }, "tool-1"),
    ]);
    assert.deepEqual(parts.slice(3).map((planned) => planned.map(describePart)), [["event:mcp.tool_progress"], ["event:mcp.tool_progress"], ["event:mcp.tool_progress"]]);
  });

  it("a total or message of the wrong type reads as null", () => {
    const { parts } = plan([...callStart, event("mcp.tool_progress", { ...progressPayload(1, null), total: "two", message: 3 }, "tool-1")]);
    assert.deepEqual(parts.at(-1)?.map(describePart), ["progress:c1:1/null:null"]);
  });
});

describe("MCP task status in the UI message stream", () => {
  const taskPayload = (status: string, statusMessage: string | null) => ({
    tool_call_id: "c1", tool_name: "notes__index_notes", server: "notes", task_id: "task-9", status, status_message: statusMessage,
  });
  const taskStart = [
    event("turn_started", { sequence: 3 }, "await"),
    event("tool_call_deferred", { tool_call_id: "c1", tool_name: "notes__index_notes", effect: "read", requires_approval: false }),
    event("tool_call_started", { tool_call_id: "c1", tool_name: "notes__index_notes" }, "tool-1"),
    event("tool_task_started", { tool_call_id: "c1", tool_name: "notes__index_notes", task_id: "task-9" }, "tool-1"),
  ];

  it("each mcp.task_status of a poll sends the call's task status part; the tool task part keeps its own status", () => {
    const { parts } = plan([
      ...taskStart,
      event("mcp.task_status", taskPayload("working", "indexing"), "poll-1"),
      event("mcp.task_status", taskPayload("completed", null), "poll-2"),
      event("tool_call_finished", { tool_call_id: "c1", tool_name: "notes__index_notes", status: "succeeded" }, "poll-2"),
    ]);
    assert.deepEqual(parts.slice(3).map((planned) => planned.map(describePart)), [
      ["data-agent-tool-task"],
      ["task-status:c1:task-9:working:indexing"],
      ["task-status:c1:task-9:completed:null"],
      ["data-agent-tool-task", "tool-output:c1:succeeded"],
    ]);
  });

  it("a task status payload without its task ID or status travels as a transient event", () => {
    const { parts } = plan([
      ...taskStart,
      event("mcp.task_status", { ...taskPayload("working", null), task_id: null }, "poll-1"),
      event("mcp.task_status", { ...taskPayload("working", null), status: undefined }, "poll-1"),
    ]);
    assert.deepEqual(parts.slice(4).map((planned) => planned.map(describePart)), [["event:mcp.task_status"], ["event:mcp.task_status"]]);
  });
});

describe("MCP parts in the AI SDK's message assembly", () => {
  it("the AI SDK client keeps one progress part and one task status part per call, the latest, beside the call's tool part", async () => {
    const chunks: UIMessageChunk[] = [
      { type: "start", messageId: "turn-2-assistant" },
      { type: "start-step" },
      { type: "tool-input-available", toolCallId: "c1", toolName: "notes__list_notes", input: {}, dynamic: true },
      { type: "data-agent-mcp-tool-progress", id: "c1", data: { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", progress: 1, total: 2, message: "read returns" } },
      { type: "data-agent-mcp-task-status", id: "c1", data: { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", taskId: "t", status: "working", statusMessage: null } },
      { type: "data-agent-mcp-tool-progress", id: "c1", data: { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", progress: 2, total: 2, message: "read shipping" } },
      { type: "data-agent-mcp-task-status", id: "c1", data: { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", taskId: "t", status: "completed", statusMessage: null } },
      { type: "tool-output-available", toolCallId: "c1", output: "{}", dynamic: true },
      { type: "finish-step" },
      { type: "finish", finishReason: "stop" },
    ];
    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    const parts = last?.parts ?? [];
    assert.deepEqual(parts.map((part) => part.type), ["step-start", "dynamic-tool", "data-agent-mcp-tool-progress", "data-agent-mcp-task-status"]);
    assert.deepEqual(parts.flatMap((part) => ("data" in part ? [part.data] : [])), [
      { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", progress: 2, total: 2, message: "read shipping" },
      { toolCallId: "c1", toolName: "notes__list_notes", server: "notes", taskId: "t", status: "completed", statusMessage: null },
    ]);
  });
});
