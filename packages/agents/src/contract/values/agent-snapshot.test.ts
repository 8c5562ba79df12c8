import assert from "node:assert/strict";
import { it } from "node:test";
import { agentSnapshotToWire, type AgentSnapshot } from "./agent-snapshot.ts";
import { emptyAgentUsage } from "./agent-usage.ts";

it("get_agent_snapshot's wire JSON has exactly the contract's fields, with no extension of ours", () => {
  const snapshot: AgentSnapshot = {
    state: null, messages: [], pendingInterrupts: [], toolCalls: [], usage: emptyAgentUsage(), queuedMessageCount: 0,
    queuedMessages: [], steeredMessages: [], contextSummary: null,
  };
  // The RPC table's fields, plus session_settings, which the session settings section adds.
  assert.deepEqual(Object.keys(agentSnapshotToWire(snapshot)).sort(), [
    "context_summary", "messages", "pending_interrupts", "plan", "queued_message_count", "queued_messages", "session_settings", "state", "steered_messages", "tool_calls", "usage",
  ]);
});
