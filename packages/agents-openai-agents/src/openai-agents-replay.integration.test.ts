/**
 * Export and replay with the OpenAI Agents SDK adapter: a session recorded
 * with an SDK model replays against today's agent without calling the model
 * or running a write tool again (a read runs), and a changed tool
 * description or argument diverges at the model call that offers it.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Agent, tool, type Model } from "@openai/agents";
import { exportSession, type SessionFixture } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, replaySession } from "@perdure/agents/testing";
import { createOpenAiAgentsSessionFlow } from "./create-openai-agents-session-flow.ts";
import { ConformanceSdkModel } from "./test-fixtures/conformance-model.ts";

/** Looks the order up, then refunds it, then answers: "Refund order 7." */
function refundingModel(): ConformanceSdkModel {
  return new ConformanceSdkModel({
    reply: async ({ lastUserText, turnToolResults }) => {
      const orderId = /order (\d+)/.exec(lastUserText)?.[1] ?? "0";
      if (turnToolResults.length === 0) return { kind: "tool_call", toolName: "lookup_order", arguments: { order_id: orderId } };
      if (turnToolResults.length === 1) return { kind: "tool_call", toolName: "refund_order", arguments: { order_id: orderId } };
      return { kind: "text", text: `Refunded: ${turnToolResults.map((result) => result.output).join("; ")}` };
    },
  });
}

/** A model a replay must never call. */
const unreachableModel: Model = {
  getResponse: () => Promise.reject(new Error("a replay must not call the model")),
  // eslint-disable-next-line require-yield -- never streams
  getStreamedResponse: async function* () {
    throw new Error("a replay must not call the model");
  },
};

const runs = { lookups: 0, refunds: 0 };

function refundAgent(model: Model, change: { refundDescription?: string; orderIdDescription?: string } = {}): Agent {
  const orderId = { type: "string", ...(change.orderIdDescription === undefined ? {} : { description: change.orderIdDescription }) };
  const parameters = { type: "object" as const, properties: { order_id: orderId }, required: ["order_id"], additionalProperties: false as const };
  const lookupOrder = tool({
    name: "lookup_order", description: "Look an order up.", parameters: parameters as never, strict: false,
    execute: async (input) => {
      runs.lookups += 1;
      return { order_id: (input as { order_id: string }).order_id, total: 30 };
    },
  });
  const refundOrder = tool({
    name: "refund_order", description: change.refundDescription ?? "Refund an order.", parameters: parameters as never, strict: false,
    execute: async (input) => {
      runs.refunds += 1;
      return { order_id: (input as { order_id: string }).order_id, refunded: true };
    },
  });
  return new Agent({ name: "refunds", instructions: "Refund orders.", model, tools: [lookupOrder, refundOrder] });
}

const policies = { toolPolicies: { lookup_order: { effect: "read" as const }, refund_order: { effect: "non_idempotent_write" as const, requiresApproval: false } } };
let fixture: SessionFixture;

before(async () => {
  const recorded = createOpenAiAgentsSessionFlow(refundAgent(refundingModel()), "OpenAiReplayRefunds", policies);
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

describe("replaySession with the OpenAI Agents SDK adapter", () => {
  it("an unchanged agent replays its own export with no divergence, without the model and without refunding again", async () => {
    assert.deepEqual(runs, { lookups: 2, refunds: 2 });
    assert.deepEqual(fixture.turns.map((turn) => turn.model_calls.length), [3, 3], "every SDK model call is recorded");
    assert.deepEqual(fixture.turns[0]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["lookup_order", "read", "succeeded"], ["refund_order", "non_idempotent_write", "succeeded"]]);
    const request = fixture.turns[0]?.model_calls[0]?.request as { system_instructions: string; tools: { name: string; description: string }[] };
    assert.equal(request.system_instructions, "Refund orders.");
    assert.deepEqual(request.tools.map((entry) => [entry.name, entry.description]), [["lookup_order", "Look an order up."], ["refund_order", "Refund an order."]]);

    const report = await replaySession(fixture, { flow: createOpenAiAgentsSessionFlow(refundAgent(unreachableModel), "OpenAiReplayRefunds", policies) });
    assert.equal(report.divergence, null, report.divergence?.diff);
    assert.equal(report.turns, 2);
    assert.equal(report.modelCalls, 6);
    assert.equal(report.toolCallsRun.length, 2, "the reads ran");
    assert.equal(report.toolCallsFromRecording.length, 2, "the refunds answered from the recording");
    assert.deepEqual(runs, { lookups: 4, refunds: 2 });
  });

  it("a changed tool description diverges at the first model call, with a readable diff", async () => {
    const report = await replaySession(fixture, { flow: createOpenAiAgentsSessionFlow(refundAgent(unreachableModel, { refundDescription: "Refund an order in full." }), "OpenAiReplayRefunds", policies) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.step, "RunModel");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.equal(report.divergence?.modelCall, 1);
    assert.match(report.divergence?.diff ?? "", /turn-1, model call 1 \(RunModel\): the agent sent the model a different request\n {2}tools\[1\]\.description\n {4}recorded: "Refund an order\."\n {4}now: {6}"Refund an order in full\."/);
    assert.equal(report.turns, 0);
    assert.equal(runs.refunds, 2);
  });

  it("a changed tool argument diverges with the argument's path", async () => {
    const report = await replaySession(fixture, { flow: createOpenAiAgentsSessionFlow(refundAgent(unreachableModel, { orderIdDescription: "The order's number." }), "OpenAiReplayRefunds", policies) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.match(report.divergence?.diff ?? "", /tools\[0\]\.parameters\.properties\.order_id\.description\n {4}recorded: \(absent\)\n {4}now: {6}"The order's number\."/);
  });

  it("a recorded refund relabelled read diverges at its CallTool and does not run", async () => {
    const relabelled = { toolPolicies: { ...policies.toolPolicies, refund_order: { effect: "read" as const } } };
    const report = await replaySession(fixture, { flow: createOpenAiAgentsSessionFlow(refundAgent(unreachableModel), "OpenAiReplayRefunds", relabelled) });
    assert.equal(report.divergence?.kind, "tool_call");
    assert.equal(report.divergence?.step, "CallTool");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.equal(report.divergence?.modelCall, 2);
    assert.equal(runs.refunds, 2);
  });
});
