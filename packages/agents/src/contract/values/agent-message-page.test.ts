import assert from "node:assert/strict";
import { it } from "node:test";
import { agentMessagePageFromWire, agentMessagePageToWire, type AgentMessagePage } from "./agent-message-page.ts";

it("a list_agent_messages page round-trips through its snake_case wire JSON", () => {
  const page: AgentMessagePage = {
    messages: [{ sequence: 51, role: "tool", text: "shipped", turnId: "turn-9", createdAt: "2026-12-02T10:00:00.000Z", toolCallId: "call-1", toolName: "lookup_order", frameworkItem: { type: "tool_result" } }],
    nextBeforeSequence: 51,
    deletedBeforeSequence: null,
  };
  const wire = agentMessagePageToWire(page);
  assert.deepEqual(Object.keys(wire), ["messages", "next_before_sequence", "deleted_before_sequence"]);
  assert.equal(wire.next_before_sequence, 51);
  assert.deepEqual((wire.messages as Record<string, unknown>[])[0]?.tool_call_id, "call-1");
  assert.deepEqual(agentMessagePageFromWire(JSON.parse(JSON.stringify(wire))), page);
  assert.deepEqual(agentMessagePageFromWire({}), { messages: [], nextBeforeSequence: null, deletedBeforeSequence: null });
  assert.throws(() => agentMessagePageFromWire([]), /AgentMessagePage must be a JSON object, got \[\]/);
});
