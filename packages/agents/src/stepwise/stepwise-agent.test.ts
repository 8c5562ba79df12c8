import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { startSessionHarness, waitForTurns } from "../session/test-fixtures/session-harness.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import type { AgentDefinition } from "./agent-definition.ts";
import { functionTool } from "./function-tool.ts";
import type { ModelRequest } from "./model-client.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "./scripted-model-client.ts";
import { buildModelInput, modelCallLimitToolResult } from "./stepwise-agent-runner.ts";

const orderParameters = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] };

function agent(script: (request: ModelRequest) => ScriptedModelReply | Promise<ScriptedModelReply>, tools: NonNullable<AgentDefinition["tools"]>, extra: { maxModelCallsPerTurn?: number; toolPolicies?: Record<string, { effect: "read" | "non_idempotent_write"; requiresApproval?: boolean }> } = {}) {
  const model = new ScriptedModelClient(script);
  const flow = createStepwiseAgentSessionFlow({ name: "test", instructions: (context) => `turn ${context.turnId}`, model, tools, ...extra }, `Stepwise${Math.random().toString(36).slice(2, 8)}`);
  return { model, flow };
}

describe("Stepwise agent", () => {
  it("stores the transcript while a read tool runs, makes one model call per RunModel and replays history", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const lookup = functionTool<{ order_id: string }>({
      name: "lookup_order", description: "Look up an order.", parameters: orderParameters, effect: "read",
      execute: async ({ order_id }) => { await gate; return { order_id, status: "shipped", items: [1, 2] }; },
    });
    const { model, flow } = agent((request) => {
      const results = ScriptedModelClient.toolResults(request);
      if (results.length > 0) return { text: `Result: ${results[0]?.output}` };
      return { text: "Checking.", toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }] };
    }, [lookup]);
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("w1", { initialMessage: "Where is order 7?" });
      const during = await pollUntil(async () => {
        const snapshot = await sessions.getAgentSnapshot("w1");
        return snapshot.messages.length === 2 ? snapshot : undefined;
      });
      assert.deepEqual(during.messages.map((message) => message.frameworkItem), [
        { type: "user_text", text: "Where is order 7?" },
        { type: "model_output", provider: "scripted", api: "scripted", item: during.messages[1]?.frameworkItem && (during.messages[1].frameworkItem as { item: unknown }).item, text: "Checking.", tool_calls: [{ id: "call-turn-1-1-0", name: "lookup_order", arguments: '{"order_id":"7"}' }] },
      ]);
      release();
      await sessions.waitForTurnCount("w1", 1);
      const snapshot = await sessions.getAgentSnapshot("w1");
      assert.deepEqual(snapshot.messages[2]?.frameworkItem, {
        type: "tool_result", tool_call_id: "call-turn-1-1-0", tool_name: "lookup_order", output: '{"order_id": "7", "status": "shipped", "items": [1, 2]}',
      });
      assert.equal(snapshot.messages[3]?.text, 'Result: {"order_id": "7", "status": "shipped", "items": [1, 2]}');
      const history = await harness.client.getStepHistory("w1");
      const runModels = history.filter((entry) => entry.stepType === "RunModel" && entry.method === "execute" && entry.status === "completed").length;
      assert.equal(model.requests.length, runModels);
      assert.equal(runModels, 2);
      assert.equal(model.requests[0]?.instructions, "turn turn-1");
      await sessions.sendUserMessage("w1", "thanks");
      await sessions.waitForTurnCount("w1", 2);
      const replay = model.requests.find((request) => request.turnId === "turn-2")?.input.map((item) => item.type);
      assert.deepEqual(replay, ["user_text", "model_output", "tool_result", "model_output", "user_text"]);
    } finally {
      release();
      await harness.dispose();
    }
  });

  it("a schema mismatch and an unknown tool reach the model as failed calls, without running anything", async () => {
    let runs = 0;
    const lookup = functionTool<{ order_id: string }>({
      name: "lookup_order", description: "Look up an order.", parameters: orderParameters, effect: "read",
      execute: () => { runs += 1; return "never"; },
    });
    const { flow } = agent((request) => {
      const results = ScriptedModelClient.toolResults(request);
      if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
      return { toolCalls: [{ name: "lookup_order", arguments: { order: 7 } }, { name: "launch_rockets", arguments: {} }] };
    }, [lookup]);
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("m1", { initialMessage: "go" });
      await sessions.waitForTurnCount("m1", 1);
      const snapshot = await sessions.getAgentSnapshot("m1");
      const answer = snapshot.messages.at(-1)?.text ?? "";
      assert.match(answer, /^The tool call failed: .*'order_id' is a required property/);
      assert.match(answer, /The tool call failed: unknown tool launch_rockets$/);
      assert.equal(runs, 0);
    } finally {
      await harness.dispose();
    }
  });

  it("after maxModelCallsPerTurn the model gets no tools, and calls it still makes are not run", async () => {
    const ping = functionTool({ name: "ping", description: "Ping.", parameters: { type: "object" }, effect: "read", execute: () => "pong" });
    const { model, flow } = agent(() => ({ text: "again", toolCalls: [{ name: "ping", arguments: {} }] }), [ping], { maxModelCallsPerTurn: 2 });
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("l1", { initialMessage: "loop" });
      await sessions.waitForTurnCount("l1", 1);
      assert.deepEqual(model.requests.map((request) => request.tools.length), [1, 1, 0]);
      const snapshot = await sessions.getAgentSnapshot("l1");
      assert.equal(snapshot.messages.at(-1)?.text, modelCallLimitToolResult(2));
      assert.equal(modelCallLimitToolResult(2), "The tool call was not run: this turn reached its limit of 2 model calls.");
    } finally {
      await harness.dispose();
    }
  });

  it("a session tool policy wins over the tool's own effect and approval", async () => {
    const refund = functionTool({ name: "refund", description: "Refund.", parameters: { type: "object" }, effect: "read", requiresApproval: false, execute: () => "done" });
    const { flow } = agent((request) => (ScriptedModelClient.toolResults(request).length > 0 ? { text: "ok" } : { toolCalls: [{ name: "refund", arguments: {} }] }), [refund], {
      toolPolicies: { refund: { effect: "non_idempotent_write", requiresApproval: true } },
    });
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("pol", { initialMessage: "refund" });
      const [interrupt] = await sessions.waitForPendingInterrupts("pol");
      const snapshot = await sessions.getAgentSnapshot("pol");
      assert.equal(snapshot.toolCalls[0]?.effect, "non_idempotent_write");
      assert.equal(await sessions.resolveInterrupt("pol", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
      await sessions.waitForTurnCount("pol", 1);
      const history = await harness.client.getStepHistory("pol");
      assert.ok(history.some((entry) => entry.stepType === "CallSingleAttemptTool" && entry.status === "completed"));
    } finally {
      await harness.dispose();
    }
  });

  it("a failed turn stores its tool results before the turn failure note", async () => {
    const lookup = functionTool({ name: "lookup_order", description: "Look up.", parameters: { type: "object" }, effect: "read", execute: () => "order 5: shipped" });
    const { flow } = agent((request) => {
      if (ScriptedModelClient.toolResults(request).length > 0) throw new Error("provider unavailable");
      return { toolCalls: [{ name: "lookup_order", arguments: {} }] };
    }, [lookup]);
    const harness = await startSessionHarness([flow]);
    const sessions = new AgentSessionTestClient(harness.client, flow);
    try {
      await sessions.start("f1", { initialMessage: "order 5?" });
      const state = await sessions.waitForState("f1", (candidate) => candidate.lastTurnError !== null);
      assert.equal(state.lastTurnError, "Error: provider unavailable");
      const snapshot = await sessions.getAgentSnapshot("f1");
      assert.deepEqual(snapshot.messages.map((message) => [message.role, (message.frameworkItem as { type?: string }).type]), [
        ["user", "user_text"], ["assistant", "model_output"], ["tool", "tool_result"], ["system", "user_text"],
      ]);
      assert.equal(snapshot.messages[2]?.text, "order 5: shipped");
      await waitForTurns(harness, "f1", 1);
    } finally {
      await harness.dispose();
    }
  });

  it("pairs every stored tool call with a result before the model sees it", () => {
    const input = buildModelInput([
      { type: "user_text", text: "hi" },
      { type: "model_output", provider: "p", api: "a", item: null, text: "", tool_calls: [{ id: "a", name: "x", arguments: "{}" }, { id: "b", name: "y", arguments: "{}" }] },
      { type: "tool_result", tool_call_id: "a", tool_name: "x", output: "A" },
      { type: "user_text", text: "next" },
    ]);
    assert.deepEqual(input.map((item) => (item.type === "tool_result" ? `${item.tool_call_id}:${item.output.slice(0, 20)}` : item.type)), [
      "user_text", "model_output", "a:A", "b:The tool call was in", "user_text",
    ]);
  });
});
