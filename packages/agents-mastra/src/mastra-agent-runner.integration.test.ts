/**
 * The Mastra adapter's own mapping, on a real engine: a tool's
 * `requireApproval` and the idempotency key in Mastra's request context,
 * stored model messages replayed unchanged, Mastra's own MCP client tools
 * (a real stdio server) deferred into tool Steps with effects from their
 * annotations, and what the adapter refuses or hides.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test, type TestContext } from "node:test";
import { Agent } from "@mastra/core/agent";
import { MockMemory } from "@mastra/core/memory";
import { createTool } from "@mastra/core/tools";
import { MCPClient } from "@mastra/mcp";
import { jsonSchema, tool as aiSdkTool } from "ai";
import { z } from "zod";
import { Client } from "@perdure/engine";
import { describeAgentSessionModel, type AgentSessionFlow } from "@perdure/agents";
import { agentTool, childSessionId, createStepwiseAgentSessionFlow, ScriptedModelClient } from "@perdure/agents/stepwise";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, readStepHistory } from "@perdure/agents/testing";
import { createMastraAgentSessionFlow } from "./create-mastra-agent-session-flow.ts";
import { idempotencyKeyRequestContextKey } from "./idempotency-key.ts";
import { currentToolExecution } from "./index.ts";
import { asMastraModel, scriptedLanguageModel, textParts, toolCallParts } from "./test-fixtures/scripted-language-model.ts";

async function startAgent(t: TestContext, flow: AgentSessionFlow): Promise<{ sessions: AgentSessionTestClient; engine: PrivateEngine }> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { sessions: new AgentSessionTestClient(environment.client, flow), engine };
}

/** Calls `toolName` with `input` once per user message, then answers with the results. */
function oneToolModel(toolName: string, input: unknown): ReturnType<typeof scriptedLanguageModel> {
  return scriptedLanguageModel(async (facts) => facts.turnToolResults.length > 0
    ? textParts(`Done: ${facts.turnToolResults.map((result) => result.output).join("; ")}`)
    : toolCallParts(`call-${facts.userMessageCount}`, toolName, input));
}

async function stepTypesOf(engine: PrivateEngine, sessionId: string): Promise<string[]> {
  const history = await readStepHistory(engine.address, sessionId);
  return history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType);
}

void test("a tool's requireApproval asks first; the tool Step runs it with the call's key in the request context and in currentToolExecution(); an AI SDK tool gets it too", async (t) => {
  const runs: { tool: string; key: unknown; scopeKey?: string | undefined }[] = [];
  const refundOrder = createTool({
    id: "refund_order",
    description: "Refund an order.",
    inputSchema: z.object({ order_id: z.string() }),
    requireApproval: true,
    execute: async ({ order_id }, { requestContext }) => {
      runs.push({ tool: "refund_order", key: requestContext?.get(idempotencyKeyRequestContextKey), scopeKey: currentToolExecution()?.idempotencyKey });
      return { refunded: order_id };
    },
  });
  // An AI SDK 7 tool types its description as a string or a function, which Mastra 1.71's tool type does not list; Mastra runs it as any AI SDK tool.
  const trackOrder = aiSdkTool({
    description: "Track an order.",
    inputSchema: jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }),
    execute: async ({ order_id }, options) => {
      runs.push({ tool: "track_order", key: (options as { requestContext?: { get(key: string): unknown } }).requestContext?.get(idempotencyKeyRequestContextKey) });
      return `order ${order_id} is in transit`;
    },
  }) as never;
  const model = scriptedLanguageModel(async (facts) => {
    if (facts.turnToolResults.length > 0) return textParts(`Done: ${facts.turnToolResults.map((result) => result.output).join("; ")}`);
    return facts.lastUserText.startsWith("Refund") ? toolCallParts("call-refund", "refund_order", { order_id: "8" }) : toolCallParts("call-track", "track_order", { order_id: "9" });
  });
  const agent = new Agent<string>({ id: "desk", name: "desk", instructions: "Help with orders.", model: asMastraModel(model), tools: { refund_order: refundOrder, track_order: trackOrder } });
  const flow = createMastraAgentSessionFlow(agent, "MastraApproval", { defaultToolEffect: "idempotent_write" });
  const { sessions, engine } = await startAgent(t, flow);

  await sessions.startSession("refund-1", { initialMessage: "Refund order 8." });
  const [interrupt] = await sessions.waitForPendingInterrupts("refund-1");
  assert.equal(interrupt?.toolName, "refund_order", "requireApproval asks although idempotent writes do not by default");
  assert.equal(runs.length, 0);
  assert.equal(await sessions.resolveInterrupt("refund-1", { interruptId: interrupt.interruptId, approved: true }), true);
  await sessions.waitForTurnCount("refund-1", 1);
  assert.deepEqual(runs, [{ tool: "refund_order", key: "refund-1/turn-1/call-refund", scopeKey: "refund-1/turn-1/call-refund" }], "the request context and the one tool-execution scope agree");
  assert.equal((await sessions.getAgentSnapshot("refund-1")).messages.at(-1)?.text, 'Done: {"refunded":"8"}');

  await sessions.startSession("track-1", { initialMessage: "Where is order 9?" });
  await sessions.waitForTurnCount("track-1", 1);
  assert.deepEqual(runs[1], { tool: "track_order", key: "track-1/turn-1/call-track" });
  const trackSteps = await stepTypesOf(engine, "track-1");
  assert.equal(trackSteps.filter((type) => type === "CallTool").length, 1, "an idempotent write without approval runs in CallTool");
  assert.equal(trackSteps.filter((type) => type === "CallSingleAttemptTool").length, 0);
});

void test("the next turn replays the stored model messages unchanged, one model call per RunModel, with usage and the tools offered as schemas", async (t) => {
  const lookupOrder = createTool({
    id: "lookup_order",
    description: "Look up an order.",
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => `order ${order_id} shipped`,
  });
  const model = oneToolModel("lookup_order", { order_id: "7" });
  const agent = new Agent<string>({ id: "orders", name: "orders", instructions: "Help.", model: asMastraModel(model), tools: { lookup_order: lookupOrder } });
  const { sessions, engine } = await startAgent(t, createMastraAgentSessionFlow(agent, "MastraReplay", { toolPolicies: { lookup_order: { effect: "read" } } }));
  await sessions.startSession("replay-1", { initialMessage: "Where is order 7?" });
  await sessions.waitForTurnCount("replay-1", 1);
  assert.equal(await sessions.sendUserMessage("replay-1", "Thanks"), true);
  await sessions.waitForTurnCount("replay-1", 2);

  assert.equal(model.doStreamCalls.length, 4, "one model call per RunModel");
  const stepTypes = await stepTypesOf(engine, "replay-1");
  assert.equal(stepTypes.filter((type) => type === "RunModel").length, 4);
  assert.equal(stepTypes.filter((type) => type === "CallTool").length, 2, "one lookup per turn");
  const offered = model.doStreamCalls[0]?.tools?.[0];
  assert.equal(offered?.name, "lookup_order");
  assert.deepEqual(offered?.type === "function" ? offered.inputSchema : undefined, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false,
  });
  assert.deepEqual(model.doStreamCalls[0]?.prompt[0], { role: "system", content: "Help." });
  // Mastra stamps each message with its own creation time; compare without it.
  const withoutStamps = (prompt: unknown): unknown => JSON.parse(JSON.stringify(prompt, (key, value: unknown) => (key === "providerOptions" ? undefined : value)));
  const firstTurnEnd = withoutStamps(model.doStreamCalls[1]?.prompt) as unknown[];
  const secondTurnStart = withoutStamps(model.doStreamCalls[2]?.prompt) as unknown[];
  const answer = { role: "assistant", content: [{ type: "text", text: "Done: order 7 shipped" }] };
  assert.deepEqual(secondTurnStart, [...firstTurnEnd, answer, { role: "user", content: [{ type: "text", text: "Thanks" }] }]);

  const snapshot = await sessions.getAgentSnapshot("replay-1");
  const turn = [["assistant", "", null], ["tool", "order 7 shipped", "lookup_order"], ["assistant", "Done: order 7 shipped", null]];
  assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text, message.toolName ?? null]), [
    ["user", "Where is order 7?", null], ...turn, ["user", "Thanks", null], ...turn,
  ]);
  assert.equal(snapshot.usage?.requests, 4);
  assert.equal(snapshot.usage?.inputTokens, 80);
});

void test("Mastra's own MCP client tools run in tool Steps: a read-only tool in CallTool, a write after approval in CallSingleAttemptTool, once each", async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-mastra-mcp-"));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const callLog = join(folder, "calls.log");
  const serverEntry = fileURLToPath(new URL("./test-fixtures/orders-mcp-server.ts", import.meta.url));
  const mcp = new MCPClient({ id: `orders-${process.pid}`, servers: { orders: { command: process.execPath, args: [serverEntry, callLog] } } });
  t.after(() => mcp.disconnect());
  const tools = await mcp.listTools();
  assert.deepEqual(Object.keys(tools).toSorted(), ["orders_cancel_order", "orders_lookup_order"]);
  const model = scriptedLanguageModel(async (facts) => {
    if (facts.turnToolResults.length > 0) return textParts(facts.turnToolResults.map((result) => result.output).join("; "));
    return /cancel/i.test(facts.lastUserText) ? toolCallParts("call-cancel", "orders_cancel_order", { order_id: "5" }) : toolCallParts("call-lookup", "orders_lookup_order", { order_id: "5" });
  });
  const agent = new Agent<string>({ id: "mcp-orders", name: "mcp-orders", instructions: "Help.", model: asMastraModel(model), tools });
  const { sessions, engine } = await startAgent(t, createMastraAgentSessionFlow(agent, "MastraMcp"));

  await sessions.startSession("mcp-1", { initialMessage: "Where is order 5?" });
  const first = await sessions.waitForTurnCount("mcp-1", 1);
  assert.equal(first.lastTurnError, null);
  assert.equal((await sessions.getAgentSnapshot("mcp-1")).messages.at(-1)?.text, "order 5 is packed", "the MCP result's text blocks, as the model reads them");

  assert.equal(await sessions.sendUserMessage("mcp-1", "Cancel order 5."), true);
  const [interrupt] = await sessions.waitForPendingInterrupts("mcp-1");
  assert.equal(interrupt?.toolName, "orders_cancel_order", "a write without annotations that say otherwise asks first");
  assert.equal(readFileSync(callLog, "utf8"), "lookup_order 5\n", "the write has not run before its approval");
  assert.equal(await sessions.resolveInterrupt("mcp-1", { interruptId: interrupt.interruptId, approved: true }), true);
  await sessions.waitForTurnCount("mcp-1", 2);
  assert.equal(readFileSync(callLog, "utf8"), "lookup_order 5\ncancel_order 5\n");
  const snapshot = await sessions.getAgentSnapshot("mcp-1");
  assert.equal(snapshot.messages.at(-1)?.text, "order 5 is cancelled");
  const stepTypes = await stepTypesOf(engine, "mcp-1");
  assert.equal(stepTypes.filter((type) => type === "CallTool").length, 1, "the read-only lookup");
  assert.equal(stepTypes.filter((type) => type === "CallSingleAttemptTool").length, 1, "the approved cancel");
});

void test("agentTools: a call starts a durable child session whose answer (and usage) returns as the tool result", async (t) => {
  const engine = await PrivateEngine.start();
  const client = new Client({ store: engine.openStore() });
  const researcher = createStepwiseAgentSessionFlow({
    name: "researcher", instructions: "Research.",
    model: new ScriptedModelClient((request) => ({ text: `findings on ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}` })),
  }, "MastraChildResearcher");
  const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic.", client });
  const model = oneToolModel("research", { task: "tides" });
  const lead = createMastraAgentSessionFlow(new Agent<string>({ id: "lead", name: "lead", instructions: "Lead.", model: asMastraModel(model) }), "MastraLead", { agentTools: [research] });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [lead, researcher], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(client, lead);
  await sessions.startSession("lead-1", { initialMessage: "Research tides." });
  await sessions.waitForTurnCount("lead-1", 1);
  const snapshot = await sessions.getAgentSnapshot("lead-1");
  assert.equal(snapshot.messages.at(-1)?.text, "Done: findings on tides");
  assert.deepEqual(model.doStreamCalls[0]?.tools?.map((offered) => offered.name), ["research"], "the agentTool is offered to Mastra's model");
  const [childState, link] = await client.getAttributes(childSessionId("lead-1", "research", "lead-1/turn-1/call-1"), researcher.agentState, researcher.parentSession);
  assert.equal(childState?.turnCount, 1);
  assert.deepEqual(link, { sessionId: "lead-1", toolCallId: "call-1", depth: 1 });
  // Two model calls of the lead and one of the child.
  assert.equal(snapshot.usage.requests, 3);
});

void test("a Mastra input validation error records the call failed with Mastra's message; an agent with memory is refused", async (t) => {
  const lookupOrder = createTool({
    id: "lookup_order",
    description: "Look up an order.",
    inputSchema: z.object({ order_id: z.string().regex(/^\d+$/) }),
    execute: async ({ order_id }) => `order ${order_id} shipped`,
  });
  const model = oneToolModel("lookup_order", { order_id: "seven" });
  const agent = new Agent<string>({ id: "strict", name: "strict", instructions: "Help.", model: asMastraModel(model), tools: { lookup_order: lookupOrder } });
  const { sessions } = await startAgent(t, createMastraAgentSessionFlow(agent, "MastraValidation", { toolPolicies: { lookup_order: { effect: "read" } } }));
  await sessions.startSession("invalid-1", { initialMessage: "Where is order seven?" });
  const state = await sessions.waitForTurnCount("invalid-1", 1);
  assert.equal(state.lastTurnError, null);
  const result = (await sessions.getAgentSnapshot("invalid-1")).messages.find((message) => message.role === "tool");
  // Recorded failed (ToolExecutionError), not as an output the tool returned.
  assert.ok(result?.text.startsWith("The tool call failed: Tool input validation failed for lookup_order"), result?.text);
  assert.deepEqual(model.doStreamCalls[0]?.tools?.map((offered) => offered.name), ["lookup_order"]);

  const remembering = new Agent<string>({ id: "remembering", name: "remembering", instructions: "Help.", model: asMastraModel(model), memory: new MockMemory() });
  assert.throws(() => createMastraAgentSessionFlow(remembering, "MastraMemory"), /agent remembering has Mastra memory/);
});

void test("a model named by a string or a provider model describes the session's model; an agent with sub-agents (agents, a record or a function) is refused naming agentTool", () => {
  const named = new Agent<string>({ id: "named", name: "named", instructions: "Help.", model: "openai/gpt-5-mini" });
  assert.equal(describeAgentSessionModel(createMastraAgentSessionFlow(named, "MastraNamedModel")), "openai/gpt-5-mini");
  const scripted = new Agent<string>({ id: "scripted", name: "scripted", instructions: "Help.", model: asMastraModel(scriptedLanguageModel(async () => textParts("hi"))) });
  assert.equal(describeAgentSessionModel(createMastraAgentSessionFlow(scripted, "MastraProviderModel")), "perdure.scripted scripted-model");
  const refusal = "agent lead has sub-agents (agents), which Mastra would run inline without their own Steps, approvals or crash recovery; a durable session runs one agent: make each sub-agent a session Flow of its own and pass agentTool from @perdure/agents/stepwise in this adapter's agentTools option, which runs it as a durable child session";
  assert.throws(() => createMastraAgentSessionFlow(new Agent<string>({ id: "lead", name: "lead", instructions: "Lead.", model: "openai/gpt-5-mini", agents: { named } }), "MastraWithSubAgents"), { name: "TypeError", message: refusal });
  assert.throws(() => createMastraAgentSessionFlow(new Agent<string>({ id: "lead", name: "lead", instructions: "Lead.", model: "openai/gpt-5-mini", agents: () => ({ named }) }), "MastraWithDynamicSubAgents"), { name: "TypeError", message: refusal });
});
