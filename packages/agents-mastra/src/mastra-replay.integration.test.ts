/**
 * Export and replay with the Mastra adapter: a session recorded with a
 * Mastra agent replays against today's agent without calling the model or
 * running a write tool again (a read runs), and a changed tool description
 * or argument diverges at the model call that offers it.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { exportSession, type SessionFixture } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, replaySession } from "@perdure/agents/testing";
import { createMastraAgentSessionFlow } from "./create-mastra-agent-session-flow.ts";
import { asMastraModel, scriptedLanguageModel, textParts, toolCallParts } from "./test-fixtures/scripted-language-model.ts";

/** Looks the order up, then refunds it, then answers: "Refund order 7." */
const refundingModel = scriptedLanguageModel(async (facts) => {
  const orderId = /order (\d+)/.exec(facts.lastUserText)?.[1] ?? "0";
  if (facts.turnToolResults.length === 0) return toolCallParts(`lookup-${facts.userMessageCount}`, "lookup_order", { order_id: orderId });
  if (facts.turnToolResults.length === 1) return toolCallParts(`refund-${facts.userMessageCount}`, "refund_order", { order_id: orderId });
  return textParts(`Refunded: ${facts.turnToolResults.map((result) => result.output).join("; ")}`);
});

/** A model a replay must never call. */
const unreachableModel = new MockLanguageModelV4({
  provider: "perdure.scripted",
  modelId: "scripted-model",
  doStream: () => Promise.reject(new Error("a replay must not call the model")),
});

const runs = { lookups: 0, refunds: 0 };

function refundAgent(model: MockLanguageModelV4, change: { refundDescription?: string; orderIdDescription?: string } = {}): Agent {
  const orderId = change.orderIdDescription === undefined ? z.string() : z.string().describe(change.orderIdDescription);
  const lookupOrder = createTool({
    id: "lookup_order", description: "Look an order up.", inputSchema: z.object({ order_id: orderId }),
    execute: async ({ order_id }) => {
      runs.lookups += 1;
      return { order_id, total: 30 };
    },
  });
  const refundOrder = createTool({
    id: "refund_order", description: change.refundDescription ?? "Refund an order.", inputSchema: z.object({ order_id: orderId }),
    execute: async ({ order_id }) => {
      runs.refunds += 1;
      return { order_id, refunded: true };
    },
  });
  return new Agent<string>({ id: "refunds", name: "refunds", instructions: "Refund orders.", model: asMastraModel(model), tools: { lookup_order: lookupOrder, refund_order: refundOrder } });
}

const policies = { toolPolicies: { lookup_order: { effect: "read" as const }, refund_order: { effect: "non_idempotent_write" as const, requiresApproval: false } } };
let fixture: SessionFixture;

before(async () => {
  const recorded = createMastraAgentSessionFlow(refundAgent(refundingModel), "MastraReplayRefunds", policies);
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [recorded], workerOptions: { pollIntervalMs: 20 } });
  try {
    const sessions = new AgentSessionTestClient(environment.client, recorded);
    await sessions.startSession("refund-1", { initialMessage: "Refund order 7." });
    await sessions.waitForTurnCount("refund-1", 1);
    await sessions.sendUserMessage("refund-1", "Refund order 8.");
    await sessions.waitForTurnCount("refund-1", 2);
    fixture = JSON.parse(JSON.stringify(await exportSession(environment.client, recorded, "refund-1"))) as SessionFixture;
  } finally {
    await environment.close();
    await engine.stop();
  }
});

describe("replaySession with the Mastra adapter", () => {
  it("an unchanged agent replays its own export with no divergence, without the model and without refunding again", async () => {
    assert.deepEqual(runs, { lookups: 2, refunds: 2 });
    assert.deepEqual(fixture.turns.map((turn) => turn.model_calls.length), [3, 3], "every Mastra model call is recorded");
    assert.deepEqual(fixture.turns[0]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["lookup_order", "read", "succeeded"], ["refund_order", "non_idempotent_write", "succeeded"]]);
    const request = fixture.turns[0]?.model_calls[0]?.request as { prompt: { role: string }[]; tools: { name: string; description: string }[] };
    assert.equal(request.prompt[0]?.role, "system");
    assert.deepEqual(request.tools.map((entry) => [entry.name, entry.description]), [["lookup_order", "Look an order up."], ["refund_order", "Refund an order."]]);

    const report = await replaySession(fixture, { flow: createMastraAgentSessionFlow(refundAgent(unreachableModel), "MastraReplayRefunds", policies) });
    assert.equal(report.divergence, null, report.divergence?.diff);
    assert.equal(report.turns, 2);
    assert.equal(report.modelCalls, 6);
    assert.deepEqual(report.toolCallsRun, ["lookup-1", "lookup-2"], "the reads ran");
    assert.deepEqual(report.toolCallsFromRecording, ["refund-1", "refund-2"], "the refunds answered from the recording");
    assert.deepEqual(runs, { lookups: 4, refunds: 2 });
  });

  it("a changed tool description diverges at the first model call, with a readable diff", async () => {
    const report = await replaySession(fixture, { flow: createMastraAgentSessionFlow(refundAgent(unreachableModel, { refundDescription: "Refund an order in full." }), "MastraReplayRefunds", policies) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.step, "RunModel");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.equal(report.divergence?.modelCall, 1);
    assert.match(report.divergence?.diff ?? "", /turn-1, model call 1 \(RunModel\): the agent sent the model a different request\n {2}tools\[1\]\.description\n {4}recorded: "Refund an order\."\n {4}now: {6}"Refund an order in full\."/);
    assert.equal(report.turns, 0);
    assert.equal(runs.refunds, 2);
  });

  it("a changed tool argument diverges with the argument's path", async () => {
    const report = await replaySession(fixture, { flow: createMastraAgentSessionFlow(refundAgent(unreachableModel, { orderIdDescription: "The order's number." }), "MastraReplayRefunds", policies) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.match(report.divergence?.diff ?? "", /tools\[0\]\.inputSchema\.properties\.order_id\.description\n {4}recorded: \(absent\)\n {4}now: {6}"The order's number\."/);
  });

  it("an agent's own prepareStep (its default options) still runs, and its model calls are still recorded", async () => {
    let ownCalls = 0;
    const base = refundAgent(refundingModel);
    const agent = new Agent<string>({
      id: "refunds-own-step", name: "refunds", instructions: "Refund orders.", model: asMastraModel(refundingModel), tools: await base.listTools(),
      defaultOptions: { prepareStep: () => { ownCalls += 1; return undefined; } },
    });
    const flow = createMastraAgentSessionFlow(agent, "MastraOwnPrepareStep", policies);
    const engine = await PrivateEngine.start();
    const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
    try {
      const sessions = new AgentSessionTestClient(environment.client, flow);
      await sessions.startSession("own-1", { initialMessage: "Refund order 9." });
      await sessions.waitForTurnCount("own-1", 1);
      const recorded = await exportSession(environment.client, flow, "own-1");
      assert.equal(recorded.turns[0]?.model_calls.length, 3);
      assert.equal(ownCalls, 3, "the agent's prepareStep ran before each model call");
    } finally {
      await environment.close();
      await engine.stop();
    }
  });
});
