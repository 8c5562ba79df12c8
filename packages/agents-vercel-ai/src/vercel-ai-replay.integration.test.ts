/**
 * Export and replay with the AI SDK adapter: a session recorded with an AI
 * SDK model replays against today's `ai` tools without calling the model or
 * running a write tool, and a changed tool description diverges.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonSchema, tool, type ToolSet } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { exportSession, type SessionFixture } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, replaySession } from "@perdure/agents/testing";
import { createVercelAiAgentSessionFlow } from "./create-vercel-ai-agent-session-flow.ts";

type CallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

const usage = { inputTokens: { total: 30, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 7, text: undefined, reasoning: undefined } };

/** Refunds on the first call after a user message, then says so. */
const refundingModel = new MockLanguageModelV4({
  provider: "adapter.mock",
  modelId: "adapter-model",
  doStream: async (options: CallOptions) => {
    const parts: StreamPart[] = options.prompt.at(-1)?.role === "tool"
      ? [{ type: "text-start", id: "a" }, { type: "text-delta", id: "a", delta: "Refunded." }, { type: "text-end", id: "a" }, { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }]
      : [{ type: "tool-call", toolCallId: `call-${options.prompt.length}`, toolName: "refund_order", input: JSON.stringify({ order_id: "7" }) }, { type: "finish", finishReason: { unified: "tool-calls", raw: "tool-calls" }, usage }];
    return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
  },
});

/** A model a replay must never call. */
const unreachableModel = new MockLanguageModelV4({
  provider: "adapter.mock",
  modelId: "adapter-model",
  doStream: () => Promise.reject(new Error("a replay must not call the model")),
});

let refunds = 0;
function refundTools(description: string): ToolSet {
  return {
    refund_order: tool({
      description,
      inputSchema: jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }),
      execute: async ({ order_id }) => {
        refunds += 1;
        return { order_id, refunded: true };
      },
    }),
  };
}
const policies = { toolPolicies: { refund_order: { effect: "non_idempotent_write" as const, requiresApproval: false } } };

void test("an AI SDK agent's session replays from its export without calling the model or refunding again; a changed tool description diverges", async () => {
  const recorded = createVercelAiAgentSessionFlow({ model: refundingModel, tools: refundTools("Refund an order.") }, "AdapterRefunds", policies);
  const engine = await PrivateEngine.start();
  let fixture: SessionFixture;
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [recorded], workerOptions: { pollIntervalMs: 20 } });
  try {
    const sessions = new AgentSessionTestClient(environment.client, recorded);
    await sessions.startSession("refund-1", { initialMessage: "Refund order 7." });
    await sessions.waitForTurnCount("refund-1", 1);
    fixture = JSON.parse(JSON.stringify(await exportSession(environment.client, recorded, "refund-1"))) as SessionFixture;
  } finally {
    await environment.close();
    await engine.stop();
  }
  assert.equal(refunds, 1);
  assert.equal(fixture.turns[0]?.model_calls.length, 2);
  assert.deepEqual(fixture.turns[0]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["refund_order", "non_idempotent_write", "succeeded"]]);

  const today = createVercelAiAgentSessionFlow({ model: unreachableModel, tools: refundTools("Refund an order.") }, "AdapterRefunds", policies);
  const report = await replaySession(fixture, { flow: today });
  assert.equal(report.divergence, null, report.divergence?.diff);
  assert.equal(report.modelCalls, 2);
  assert.equal(report.toolCallsFromRecording.length, 1);
  assert.equal(refunds, 1, "the replay answered the refund from the recording");

  const changed = createVercelAiAgentSessionFlow({ model: unreachableModel, tools: refundTools("Refund an order in full.") }, "AdapterRefunds", policies);
  const diverged = await replaySession(fixture, { flow: changed });
  assert.equal(diverged.divergence?.kind, "model_request");
  assert.equal(diverged.divergence?.turnId, "turn-1");
  assert.match(diverged.divergence?.diff ?? "", /description\n {4}recorded: "Refund an order\."\n {4}now: {6}"Refund an order in full\."/);
});
