import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessage } from "../contract/values/agent-message.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { maxAgentToolApprovalDecisions, readAgentToolApprovalResponses, selectAgentToolApprovalDecisions } from "./agent-tool-approvals.ts";
import { convertAgentSnapshotToUIMessages } from "./agent-ui-messages.ts";

function message(sequence: number, role: AgentMessage["role"], text: string, turnId: string, extra: Partial<AgentMessage> = {}): AgentMessage {
  return { sequence, role, text, turnId, createdAt: "2026-12-02T10:00:00.000Z", frameworkItem: null, ...extra };
}

function record(toolCallId: string, status: AgentToolCallRecord["status"], extra: Partial<AgentToolCallRecord> = {}): AgentToolCallRecord {
  return {
    toolCallId, toolName: "refund", arguments: `{"id":"${toolCallId}"}`, effect: "non_idempotent_write", requiresApproval: true,
    status, output: null, error: null, turnId: "turn-2", deferralOrder: Number(toolCallId.slice(1)), ...extra,
  };
}

function snapshot(messages: AgentMessage[], toolCalls: AgentToolCallRecord[] = [], activeTurnId: string | null = null): AgentSnapshot {
  return {
    state: {
      status: activeTurnId === null ? "waiting_for_user_message" : "running_tools", activeTurnId, turnCount: 2, messageCount: messages.length,
      interactionMode: "chat", lastTurnError: null, createdAt: "", updatedAt: "",
    },
    messages,
    pendingInterrupts: toolCalls.filter((call) => call.status === "awaiting_approval").map((call) => ({
      interruptId: `${call.toolCallId}-approval`, kind: "approval" as const, toolCallId: call.toolCallId, toolName: call.toolName,
      arguments: call.arguments, turnId: call.turnId, deadline: null, createdAt: "",
    })),
    toolCalls,
    usage: emptyAgentUsage(),
    queuedMessageCount: 0,
    plan: null,
    queuedMessages: [],
    steeredMessages: [],
    contextSummary: null,
  };
}

describe("stored messages as UI messages", () => {
  it("groups a turn's replies into its assistant message: a step per model response, tool parts with the stored result text", () => {
    const messages = convertAgentSnapshotToUIMessages(snapshot([
      message(1, "user", "Where is order 7?", "turn-1"),
      message(2, "assistant", "Let me look.", "turn-1", { frameworkItem: { type: "model_output", text: "Let me look.", tool_calls: [{ id: "c1", name: "lookup", arguments: '{"order_id":"7"}' }] } }),
      message(3, "tool", "shipped", "turn-1", { toolCallId: "c1", toolName: "lookup" }),
      message(4, "assistant", "", "turn-1", { frameworkItem: { role: "assistant", content: [{ type: "tool-call", toolCallId: "c2", toolName: "refund", input: { order_id: "7" } }] } }),
      message(5, "tool", "The user rejected this tool call.", "turn-1", { toolCallId: "c2", toolName: "refund" }),
      message(6, "assistant", "It shipped.", "turn-1"),
      message(7, "user", "Thanks", "turn-2"),
      message(8, "system", "This turn failed before the assistant could answer.", "turn-2"),
    ]));
    assert.deepEqual(messages, [
      { id: "message-1", role: "user", parts: [{ type: "text", text: "Where is order 7?" }] },
      {
        id: "turn-1-assistant",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me look.", state: "done" },
          { type: "dynamic-tool", toolCallId: "c1", toolName: "lookup", state: "output-available", input: { order_id: "7" }, output: "shipped" },
          { type: "step-start" },
          { type: "dynamic-tool", toolCallId: "c2", toolName: "refund", state: "output-available", input: { order_id: "7" }, output: "The user rejected this tool call." },
          { type: "step-start" },
          { type: "text", text: "It shipped.", state: "done" },
        ],
      },
      { id: "message-7", role: "user", parts: [{ type: "text", text: "Thanks" }] },
      { id: "message-8", role: "system", parts: [{ type: "text", text: "This turn failed before the assistant could answer." }] },
    ]);
  });

  it("shows the active turn's records: pending approvals, running calls and outcomes", () => {
    const messages = convertAgentSnapshotToUIMessages(snapshot([
      message(1, "user", "Refund all", "turn-2"),
      message(2, "assistant", "Refunding.", "turn-2", { frameworkItem: { type: "model_output", tool_calls: [{ id: "c0", name: "refund", arguments: '{"id":"c0"}' }] } }),
    ], [
      record("c0", "awaiting_approval"),
      record("c1", "approved"),
      record("c2", "succeeded", { output: "refunded" }),
      record("c3", "rejected", { error: "not allowed", output: "The user rejected this tool call: not allowed" }),
      record("c4", "failed", { requiresApproval: false, error: "timeout", output: "The tool call failed: timeout" }),
    ], "turn-2"));
    assert.deepEqual(messages.at(-1)?.parts.slice(2), [
      { type: "dynamic-tool", toolCallId: "c0", toolName: "refund", input: { id: "c0" }, state: "approval-requested", approval: { id: "c0-approval" } },
      { type: "dynamic-tool", toolCallId: "c1", toolName: "refund", input: { id: "c1" }, state: "approval-responded", approval: { id: "c1-approval", approved: true } },
      { type: "dynamic-tool", toolCallId: "c2", toolName: "refund", input: { id: "c2" }, state: "output-available", output: "refunded", approval: { id: "c2-approval", approved: true } },
      { type: "dynamic-tool", toolCallId: "c3", toolName: "refund", input: { id: "c3" }, state: "output-denied", approval: { id: "c3-approval", approved: false, reason: "not allowed" } },
      { type: "dynamic-tool", toolCallId: "c4", toolName: "refund", input: { id: "c4" }, state: "output-error", errorText: "timeout" },
    ]);
  });
});

describe("approval decisions from the browser", () => {
  const responded = (id: unknown, approved: unknown, extra: Record<string, unknown> = {}) => ({ type: "dynamic-tool", toolCallId: `call-${String(id)}`, state: "approval-responded", approval: { id, approved }, ...extra });

  it("reads approval-responded tool parts bound to the message's turn, skipping anything malformed", () => {
    const decisions = readAgentToolApprovalResponses({
      id: "turn-4-assistant",
      role: "assistant",
      parts: [
        responded("a", true),
        { ...responded("b", false), approval: { id: "b", approved: false, reason: "no" } },
        { ...responded("c", true), type: "tool-refund" },
        responded("d", "yes"),
        responded(7, true),
        { ...responded("e", true), state: "approval-requested" },
        { ...responded("f", true), type: "text" },
        null,
        "part",
      ],
    });
    assert.deepEqual(decisions, [
      { approvalId: "a", approved: true, toolCallId: "call-a", turnId: "turn-4" },
      { approvalId: "b", approved: false, reason: "no", toolCallId: "call-b", turnId: "turn-4" },
      { approvalId: "c", approved: true, toolCallId: "call-c", turnId: "turn-4" },
    ]);
    assert.deepEqual(readAgentToolApprovalResponses({ id: "someone-else", role: "assistant", parts: [responded("a", true)] }).map((decision) => decision.turnId), [null]);
    assert.deepEqual(readAgentToolApprovalResponses({ id: "turn-4-assistant", role: "user", parts: [responded("a", true)] }).map((decision) => decision.turnId), [null]);
    assert.deepEqual(readAgentToolApprovalResponses("nonsense"), []);
    assert.deepEqual(readAgentToolApprovalResponses({ parts: "nope" }), []);
  });

  it("reads at most 100 decisions and keeps the first per approval ID", () => {
    const parts = Array.from({ length: 150 }, (_, index) => responded(`id-${index}`, true));
    assert.equal(readAgentToolApprovalResponses({ id: "turn-1-assistant", role: "assistant", parts }).length, maxAgentToolApprovalDecisions);
    const selected = selectAgentToolApprovalDecisions([
      { approvalId: "x", approved: false, turnId: "turn-1", toolCallId: null },
      { approvalId: "x", approved: true, turnId: "turn-1", toolCallId: null },
      { approvalId: 5, approved: true },
      ...Array.from({ length: 120 }, (_, index) => ({ approvalId: `y-${index}`, approved: true, turnId: "turn-1", toolCallId: null })),
    ]);
    assert.equal(selected.length, 98, "of the first 100 entries, one duplicate and one malformed are dropped");
    assert.deepEqual(selected[0], { approvalId: "x", approved: false, turnId: "turn-1", toolCallId: null });
  });
});
