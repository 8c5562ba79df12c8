import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StreamMessage } from "@perdure/engine";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { convertAgentEventMessageToJson, convertAgentEventToJson } from "./agent-event-json.ts";

const event: AgentEvent = { type: "tool_call_started", turnId: "turn-2", attempt: 3, stepExecutionId: "17", payload: { tool_call_id: "call-1", tool_name: "lookup_order" } };

function messageWrittenAt(writtenAt: Date): StreamMessage<AgentEvent> {
  return { value: event, token: "token-5", index: 5, writtenAt };
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

  it("a Stream message carries the time it was written as written_at, whenever it is converted", () => {
    const first = convertAgentEventMessageToJson(messageWrittenAt(new Date("2026-12-02T19:32:04.125Z")));
    const later = convertAgentEventMessageToJson(messageWrittenAt(new Date("2026-12-02T21:05:59.001Z")));
    assert.deepEqual(first, { ...convertAgentEventToJson(event), written_at: "2026-12-02T19:32:04.125Z" });
    assert.equal(later.written_at, "2026-12-02T21:05:59.001Z");
  });
});
