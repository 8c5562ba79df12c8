import assert from "node:assert/strict";
import { it } from "node:test";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import { planAgentEventParts, type PlannedAgentUIPart } from "./agent-event-parts.ts";
import { initialAgentUIStreamState } from "./agent-ui-stream-state.ts";

function event(type: AgentEventType, payload: Record<string, unknown> = {}, attempt = 1): AgentEvent {
  return { type, turnId: "turn-1", attempt, stepExecutionId: "model-1", payload };
}

function chunks(events: readonly AgentEvent[]): unknown[] {
  let state = initialAgentUIStreamState();
  const parts: PlannedAgentUIPart[] = [];
  for (const value of events) {
    const planned = planAgentEventParts(state, value);
    parts.push(...planned.parts);
    state = planned.state;
  }
  return parts.map((part) => (part.kind === "chunk" ? part.chunk : part));
}

const started = (id: string, input: unknown, attempt = 1) => event("harness.tool_call_started", { tool_call_id: id, tool_name: "lookup_order", input }, attempt);
const finished = (id: string, output: string, isError = false, attempt = 1) => event("harness.tool_call_finished", { tool_call_id: id, tool_name: "lookup_order", output, is_error: isError }, attempt);

it("a call the harness ran in RunModel shows as a tool part: input when it starts, output when it finishes, in the model step", () => {
  assert.deepEqual(chunks([event("turn_started"), event("text_delta", { text: "Looking." }), started("toolu_1", { order_id: "7" }), finished("toolu_1", "order 7 shipped")]), [
    { type: "start", messageId: "turn-1-assistant" },
    { type: "start-step" },
    { type: "text-start", id: "text-0" },
    { type: "text-delta", id: "text-0", delta: "Looking." },
    { type: "text-end", id: "text-0" },
    { type: "tool-input-available", toolCallId: "toolu_1", toolName: "lookup_order", input: { order_id: "7" }, dynamic: true },
    { type: "tool-output-available", toolCallId: "toolu_1", output: "order 7 shipped", dynamic: true },
  ]);
});

it("an error result is a tool-output-error; a finish without its start still shows the call once", () => {
  assert.deepEqual(chunks([event("turn_started"), finished("toolu_2", "Bash needs approval", true)]).slice(2), [
    { type: "tool-input-available", toolCallId: "toolu_2", toolName: "lookup_order", input: null, dynamic: true },
    { type: "tool-output-error", toolCallId: "toolu_2", errorText: "Bash needs approval", dynamic: true },
  ]);
});

it("a rerun of RunModel resets the step, so the call shows again; an older attempt's event adds nothing; a malformed payload travels as an event", () => {
  const parts = chunks([event("turn_started"), started("toolu_1", {}), started("toolu_1", {}, 2), finished("toolu_1", "late", false, 1), event("harness.tool_call_finished", { tool_call_id: "toolu_1" }, 2)]);
  assert.deepEqual(parts.map((part) => (part as { type: string }).type), ["start", "start-step", "tool-input-available", "reset-step", "tool-input-available", "data-agent-event"]);
});
