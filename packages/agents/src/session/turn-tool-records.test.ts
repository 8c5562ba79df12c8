/**
 * The active turn's tool call records across model rounds, the contract's
 * approval defaults by effect, and `resolveToolPolicy` with the framework
 * effect passed positionally.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentFrameworkRunner, AgentTurnContext, AgentTurnOutcome } from "../contract/agent-framework-runner.ts";
import { selectUnstoredToolCalls } from "../contract/unstored-tool-calls.ts";
import { ScriptedAgentRunner } from "../testing/scripted-agent-runner.ts";
import { emptyAgentUsage } from "../contract/values/agent-usage.ts";
import { turnFailureNoteFooter, turnFailureNoteHeader } from "../contract/values/result-texts.ts";
import { approvalOverrideOf, defaultRequiresApproval, resolveToolPolicy } from "../contract/values/tool-effect.ts";
import { createAgentSessionFlow } from "./create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns } from "./test-fixtures/session-harness.ts";

/**
 * A runner that stores no messages as it goes: two rounds of one tool call
 * each, then a model call that always fails. What ran must reach the
 * failure note from the records alone.
 */
class ForgetfulRunner implements AgentFrameworkRunner {
  readonly seenToolCalls: string[][] = [];

  buildUserMessage(text: string) {
    return { role: "user" as const, text, frameworkItem: { text } };
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    this.seenToolCalls.push(turn.toolCalls.map((call) => call.toolCallId));
    const round = turn.toolCalls.length;
    if (round >= 2) throw new Error("the provider is down");
    const name = round === 0 ? "lookup_order" : "refund_order";
    return {
      kind: "tool_calls_requested",
      frameworkRunState: `round ${round + 1}`,
      toolCalls: [{ toolCallId: `call-${round + 1}`, toolName: name, arguments: "{}", policy: turn.resolveToolPolicy(name, round === 0 ? "read" : "idempotent_write") }],
      usage: emptyAgentUsage(),
    };
  }

  async executeDeferredToolCall() {
    return { output: "done" };
  }
}

describe("the active turn's tool call records", () => {
  it("a two-round turn that fails records both rounds' tools in the failure note, for a runner that stores no messages", { timeout: 300_000 }, async () => {
    const runner = new ForgetfulRunner();
    const flow = createAgentSessionFlow(runner, "Forgetful");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "f1", { initial_message: "refund order 7" });
      const state = await harness.waitForState("f1", (candidate) => candidate.lastTurnError !== null, "the turn to fail");
      assert.equal(state.lastTurnError, "Error: the provider is down");
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "f1");
      assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text]), [
        ["user", "refund order 7"],
        ["system", [turnFailureNoteHeader, "- lookup_order (call-1): succeeded: done", "- refund_order (call-2): succeeded: done", turnFailureNoteFooter].join("\n")],
      ]);
      // Every model call saw every earlier round's calls, in the order they were made; the turn's end clears them.
      assert.deepEqual(runner.seenToolCalls.slice(0, 2), [[], ["call-1"]]);
      assert.deepEqual(runner.seenToolCalls.slice(2), [["call-1", "call-2"], ["call-1", "call-2"], ["call-1", "call-2"]]);
      assert.deepEqual(snapshot.toolCalls, []);
    } finally {
      await harness.dispose();
    }
  });

  it("records keep one order across rounds, and a runner that stores its turn sees only the results it has not stored", async () => {
    const seenUnstored: string[][] = [];
    const runner = new ScriptedAgentRunner((input) => {
      seenUnstored.push(input.previousResults.map((call) => call.toolCallId));
      if (input.modelCall <= 2) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: String(input.modelCall) } }, { name: "lookup_order", arguments: { order_id: "x" } }] };
      return { text: "done" };
    }, { lookup_order: { effect: "read", execute: async () => "found" } });
    const flow = createAgentSessionFlow(runner, "Rounds");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "r1", { initial_message: "look twice" });
      await waitForTurns(harness, "r1", 1);
      assert.deepEqual(seenUnstored, [[], ["turn-1-call-1-0", "turn-1-call-1-1"], ["turn-1-call-2-0", "turn-1-call-2-1"]]);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "r1");
      assert.equal(snapshot.messages.filter((message) => message.role === "tool").length, 4, "each result stored once");
    } finally {
      await harness.dispose();
    }
  });

  it("selectUnstoredToolCalls leaves out calls whose results the turn already stored", () => {
    const call = (toolCallId: string) => ({ toolCallId, toolName: "t", arguments: "{}", effect: "read" as const, requiresApproval: false, status: "succeeded" as const, output: "ok", error: null, turnId: "turn-2", deferralOrder: 0 });
    const stored = { sequence: 3, role: "tool" as const, text: "ok", turnId: "turn-2", toolCallId: "a", createdAt: "", frameworkItem: null };
    const earlierTurn = { ...stored, sequence: 1, turnId: "turn-1", toolCallId: "b" };
    assert.deepEqual(selectUnstoredToolCalls({ turnId: "turn-2", messages: [earlierTurn, stored], toolCalls: [call("a"), call("b")] }).map((found) => found.toolCallId), ["b"]);
  });
});

describe("tool policies", () => {
  it("the contract's effects table: reads and idempotent writes run without approval", () => {
    assert.deepEqual(["read", "idempotent_write", "non_idempotent_write", "unclassified"].map((effect) => defaultRequiresApproval(effect as never)), [false, false, true, true]);
  });

  it("resolveToolPolicy takes the framework effect positionally, as the contract's runner calls it", () => {
    assert.deepEqual(resolveToolPolicy("search", {}, "unclassified", "read"), { effect: "read", requiresApproval: false });
    assert.deepEqual(resolveToolPolicy("upsert", {}, "unclassified", "idempotent_write"), { effect: "idempotent_write", requiresApproval: false });
    assert.deepEqual(resolveToolPolicy("wire", {}, "unclassified", "non_idempotent_write"), { effect: "non_idempotent_write", requiresApproval: true });
    assert.deepEqual(resolveToolPolicy("anything", {}, "unclassified"), { effect: "unclassified", requiresApproval: true });
    // Perdure's object form carries a framework's own approval flag; session policies pick the effect.
    assert.deepEqual(resolveToolPolicy("search", {}, "unclassified", { effect: "read", requiresApproval: true }), { effect: "read", requiresApproval: true });
    assert.deepEqual(resolveToolPolicy("search", { search: { effect: "non_idempotent_write" } }, "unclassified", "read"), { effect: "non_idempotent_write", requiresApproval: true });
    assert.throws(() => resolveToolPolicy("search", {}, "unclassified", "readonly" as never), /framework effect "readonly" is invalid: pass one of read, idempotent_write, non_idempotent_write, unclassified/);
  });

  it("a session policy that names only an effect keeps the framework's approval: the stricter wins", () => {
    const policies = { reset_password: { effect: "idempotent_write" as const } };
    assert.deepEqual(resolveToolPolicy("reset_password", policies, "unclassified", { requiresApproval: true }), { effect: "idempotent_write", requiresApproval: true });
    assert.deepEqual(resolveToolPolicy("reset_password", policies, "unclassified", { requiresApproval: false }), { effect: "idempotent_write", requiresApproval: false });
    assert.deepEqual(resolveToolPolicy("reset_password", policies, "unclassified"), { effect: "idempotent_write", requiresApproval: false });
    // A framework that says no approval cannot lower the effect's default.
    assert.deepEqual(resolveToolPolicy("refund", { refund: { effect: "non_idempotent_write" } }, "unclassified", { requiresApproval: false }), { effect: "non_idempotent_write", requiresApproval: true });
    // Only an explicit requiresApproval: false turns the framework's approval off, and that is an override to log.
    const explicit = { reset_password: { effect: "idempotent_write" as const, requiresApproval: false } };
    assert.deepEqual(resolveToolPolicy("reset_password", explicit, "unclassified", { requiresApproval: true }), { effect: "idempotent_write", requiresApproval: false });
    assert.equal(approvalOverrideOf("reset_password", explicit, { requiresApproval: true }), true);
    assert.equal(approvalOverrideOf("reset_password", explicit, { requiresApproval: false }), false);
    assert.equal(approvalOverrideOf("reset_password", policies, { requiresApproval: true }), false);
  });

  it("an idempotent write from a runner runs without asking", async () => {
    const runner = new ScriptedAgentRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "save_note", arguments: { text: "hi" } }] }
      : { text: `${input.previousResults[0]?.status}` }, { save_note: { effect: "idempotent_write", execute: async () => "saved" } });
    const flow = createAgentSessionFlow(runner, "IdempotentWrite");
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "i1", { initial_message: "save it" });
      await waitForTurns(harness, "i1", 1);
      const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "i1");
      assert.equal(snapshot.messages.at(-1)?.text, "succeeded");
      const history = await harness.client.getStepHistory("i1");
      assert.equal(history.some((entry) => entry.stepType === "AwaitToolApproval"), false);
      assert.ok(history.some((entry) => entry.stepType === "CallTool" && entry.status === "completed"));
    } finally {
      await harness.dispose();
    }
  });
});
