import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StreamMessage } from "@perdure/engine";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { convertAgentEventToJson } from "./agent-event-json.ts";
import { agentEventWriteTimesEventName, agentEventWriteTimesFrame } from "./agent-event-write-times.ts";

const event: AgentEvent = { type: "tool_call_started", turnId: "turn-2", attempt: 3, stepExecutionId: "17", payload: { tool_call_id: "call-1", tool_name: "lookup_order" } };

function messageWrittenAt(token: string, writtenAt: Date): StreamMessage<AgentEvent> {
  return { value: event, token, index: 5, writtenAt };
}

describe("event JSON", () => {
  it("an event becomes its wire fields with the payload as JSON text, and no time of its own", () => {
    assert.deepEqual(convertAgentEventToJson(event), {
      type: "tool_call_started",
      turn_id: "turn-2",
      attempt: 3,
      step_execution_id: "17",
      payload: "{\"tool_call_id\":\"call-1\",\"tool_name\":\"lookup_order\"}",
    });
  });

  it("write times travel in a frame of their own event type, keyed by each event's id, never in an event's data", () => {
    const frame = agentEventWriteTimesFrame([
      messageWrittenAt("token-5", new Date("2026-12-02T19:32:04.125Z")),
      messageWrittenAt("token-6", new Date("2026-12-02T21:05:59.001Z")),
    ]);
    assert.equal(frame, `event: ${agentEventWriteTimesEventName}\ndata: {"token-5":"2026-12-02T19:32:04.125Z","token-6":"2026-12-02T21:05:59.001Z"}\n\n`);
    assert.equal(agentEventWriteTimesEventName, "perdure-write-times");
    assert.ok(!frame.includes("\nid: ") && !frame.startsWith("id: "), "the frame leaves Last-Event-ID alone");
  });
});
