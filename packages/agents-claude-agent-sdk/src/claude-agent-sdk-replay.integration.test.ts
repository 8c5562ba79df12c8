/**
 * Export and replay with the Claude Agent SDK adapter: a session recorded
 * with the real Claude Code harness on a loopback fake of the Messages API
 * replays against today's agent without starting the harness or running
 * the write again, and a changed tool description or argument diverges at
 * the run that offers it.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { exportSession, type SessionFixture } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, replaySession } from "@perdure/agents/testing";
import { createClaudeAgentSdkSessionFlow } from "./create-claude-agent-sdk-session-flow.ts";
import { scriptedHarnessOptions } from "./test-fixtures/scripted-harness-options.ts";
import type { FakeMessagesReply, FakeMessagesRequest } from "./testing/fake-messages-api.ts";
import { readFakeRequest } from "./testing/read-fake-request.ts";

/** Looks the order up (a read, inside the harness), then refunds it (a write, in its tool Step), then answers. */
function refundScript(request: FakeMessagesRequest): Promise<FakeMessagesReply> {
  const facts = readFakeRequest(request);
  const id = `toolu_${facts.userTextMessages}_${facts.modelCallInTurn}`;
  if (facts.turnToolResults.length === 0) return Promise.resolve({ kind: "tool_use", id, name: "mcp__perdure__lookup_order", input: { order_id: "7" } });
  if (facts.turnToolResults.length === 1) return Promise.resolve({ kind: "tool_use", id, name: "mcp__perdure__refund_order", input: { order_id: "7" } });
  return Promise.resolve({ kind: "text", text: `Done: ${facts.turnToolResults.map((result) => result.output).join("; ")}` });
}

const runs = { lookups: 0, refunds: 0 };

function refundFlow(queryOptions: () => Promise<Record<string, unknown>>, change: { refundDescription?: string; orderIdDescription?: string } = {}) {
  const orderId = change.orderIdDescription === undefined ? z.string() : z.string().describe(change.orderIdDescription);
  const lookupOrder = tool("lookup_order", "Look up an order.", { order_id: orderId }, async ({ order_id }) => {
    runs.lookups += 1;
    return { content: [{ type: "text", text: `order ${order_id} shipped` }] };
  }, { annotations: { readOnlyHint: true } });
  const refundOrder = tool("refund_order", change.refundDescription ?? "Refund an order.", { order_id: orderId }, async ({ order_id }) => {
    runs.refunds += 1;
    return { content: [{ type: "text", text: `refunded order ${order_id}` }] };
  });
  return createClaudeAgentSdkSessionFlow({ systemPrompt: "You help with orders.", tools: [lookupOrder, refundOrder] }, "ClaudeReplayRefunds", {
    queryOptions,
    toolPolicies: { refund_order: { effect: "non_idempotent_write", requiresApproval: false } },
  });
}

/** Options whose harness a replay must never start: no API to call. */
const unreachableOptions = async (): Promise<Record<string, unknown>> => ({ model: "claude-fake-1", env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "sk-perdure-fake" } });

let fixture: SessionFixture;

before(async () => {
  const harness = scriptedHarnessOptions(refundScript);
  const recorded = refundFlow(harness.queryOptions);
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [recorded], workerOptions: { pollIntervalMs: 20 } });
  try {
    const sessions = new AgentSessionTestClient(environment.client, recorded);
    await sessions.startSession("refund-1", { initialMessage: "Refund order 7." });
    const ended = await sessions.waitForTurnCount("refund-1", 1, { timeoutMs: 180_000 });
    assert.equal(ended.lastTurnError, null);
    fixture = JSON.parse(JSON.stringify(await exportSession(environment.client, recorded, "refund-1"))) as SessionFixture;
  } finally {
    await environment.close();
    await engine.stop();
    await (await harness.api).close();
  }
});

describe("replaySession with the Claude Agent SDK adapter", () => {
  it("an unchanged agent replays its own export with no divergence, without the harness and without refunding again", async () => {
    assert.deepEqual(runs, { lookups: 1, refunds: 1 });
    assert.equal(fixture.turns[0]?.model_calls.length, 2, "one recorded call per run of the harness: up to the refund, then after it");
    assert.deepEqual(fixture.turns[0]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["refund_order", "non_idempotent_write", "succeeded"]]);
    const request = fixture.turns[0]?.model_calls[0]?.request as { system_prompt: string; prompt: string; tools: { name: string; description: string }[] };
    assert.equal(request.system_prompt, "You help with orders.");
    assert.equal(request.prompt, "Refund order 7.");
    assert.deepEqual(request.tools.map((entry) => [entry.name, entry.description]), [["mcp__perdure__lookup_order", "Look up an order."], ["mcp__perdure__refund_order", "Refund an order."]]);

    const report = await replaySession(fixture, { flow: refundFlow(unreachableOptions) });
    assert.equal(report.divergence, null, report.divergence?.diff);
    assert.equal(report.turns, 1);
    assert.equal(report.modelCalls, 2);
    assert.equal(report.toolCallsFromRecording.length, 1, "the refund answered from the recording");
    assert.deepEqual(runs, { lookups: 1, refunds: 1 }, "the read that ran inside the harness is in the recorded transcript; nothing ran again");
  });

  it("a changed tool description diverges at the first run, with a readable diff", async () => {
    const report = await replaySession(fixture, { flow: refundFlow(unreachableOptions, { refundDescription: "Refund an order in full." }) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.step, "RunModel");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.equal(report.divergence?.modelCall, 1);
    assert.match(report.divergence?.diff ?? "", /turn-1, model call 1 \(RunModel\): the agent sent the model a different request\n {2}tools\[1\]\.description\n {4}recorded: "Refund an order\."\n {4}now: {6}"Refund an order in full\."/);
    assert.equal(runs.refunds, 1);
  });

  it("a changed tool argument diverges with the argument's path", async () => {
    const report = await replaySession(fixture, { flow: refundFlow(unreachableOptions, { orderIdDescription: "The order's number." }) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.match(report.divergence?.diff ?? "", /tools\[0\]\.input_schema\.properties\.order_id\.description\n {4}recorded: \(absent\)\n {4}now: {6}"The order's number\."/);
  });
});
