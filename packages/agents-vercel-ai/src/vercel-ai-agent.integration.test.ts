/**
 * The AI SDK adapter's own mapping, on a real engine: tool policies from
 * `needsApproval`, zod schemas and their transforms, streaming tools,
 * settings objects and `ToolLoopAgent`s, and stored messages replayed to
 * the model unchanged.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { jsonSchema, tool, ToolLoopAgent, type ToolSet } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "@perdure/agents";
import { agentTool, childSessionId, createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient } from "@perdure/agents/stepwise";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine } from "@perdure/agents/testing";
import { createVercelAiAgentSessionFlow } from "./create-vercel-ai-agent-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";

type CallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

function finish(unified: "stop" | "tool-calls"): StreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: { inputTokens: { total: 30, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 7, text: undefined, reasoning: undefined } },
  };
}

/** Calls `toolName` with `input` on the first model call after a user message, then answers with the tool results. */
function oneToolModel(toolName: string, input: unknown): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "adapter.mock",
    modelId: "adapter-model",
    doStream: async (options: CallOptions) => {
      const last = options.prompt.at(-1);
      const parts: StreamPart[] = last?.role === "tool"
        ? [{ type: "text-start", id: "a" }, { type: "text-delta", id: "a", delta: `Done: ${JSON.stringify(last.content.map((part) => part.type === "tool-result" ? part.output : null))}` }, { type: "text-end", id: "a" }, finish("stop")]
        : [{ type: "tool-call", toolCallId: `call-${options.prompt.length}`, toolName, input: JSON.stringify(input) }, finish("tool-calls")];
      return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
    },
  });
}

async function startAgent(t: TestContext, flow: AgentSessionFlow): Promise<AgentSessionTestClient> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return new AgentSessionTestClient(environment.client, flow);
}

void test("needsApproval: true asks for approval even for a read tool without a session policy; only requiresApproval: false in a policy turns it off", async (t) => {
  let runs = 0;
  const tools: ToolSet = {
    lookup_order: tool({
      inputSchema: jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }),
      needsApproval: true,
      execute: async ({ order_id }) => {
        runs += 1;
        return { order_id, status: "shipped" };
      },
    }),
  };
  const gated = createVercelAiAgentSessionFlow({ model: oneToolModel("lookup_order", { order_id: "7" }), tools }, "AdapterGated", { defaultToolEffect: "read" });
  const sessions = await startAgent(t, gated);
  await sessions.startSession("gated-1", { initialMessage: "Where is order 7?" });
  const [interrupt] = await sessions.waitForPendingInterrupts("gated-1");
  assert.equal(interrupt?.kind, "approval");
  assert.equal(runs, 0);
  assert.equal(await sessions.resolveInterrupt("gated-1", { interruptId: interrupt.interruptId, approved: true }), true);
  await sessions.waitForTurnCount("gated-1", 1);
  assert.equal(runs, 1);

  // The stricter wins: a policy that names only an effect keeps needsApproval; an explicit false overrides it, logged once.
  const warnings: unknown[] = [];
  t.mock.method(console, "warn", (...args: unknown[]) => warnings.push(args.join(" ")));
  const overridden = createVercelAiAgentSessionFlow({ model: oneToolModel("lookup_order", { order_id: "8" }), tools }, "AdapterOverridden", {
    toolPolicies: { lookup_order: { effect: "read", requiresApproval: false } },
  });
  const direct = await startAgent(t, overridden);
  await direct.startSession("direct-1", { initialMessage: "Where is order 8?" });
  const state = await direct.waitForTurnCount("direct-1", 1);
  assert.equal(state.lastTurnError, null);
  assert.equal(runs, 2, "no approval was asked");
  assert.deepEqual(warnings.filter((warning) => String(warning).includes("requiresApproval is false")), [
    "perdure agents: toolPolicies.lookup_order.requiresApproval is false, so calls of lookup_order run without the approval its framework asks for",
  ]);
  const snapshot = await direct.getAgentSnapshot("direct-1");
  // Outputs are recorded as text (objects as Python-compatible JSON), so the model sees the stored result.
  assert.equal(snapshot.messages.at(-1)?.text, `Done: ${JSON.stringify([{ type: "text", value: '{"order_id": "8", "status": "shipped"}' }])}`);
});

void test("a zod inputSchema is offered as JSON Schema, its transform applies before execute, and a streaming execute's last value is the output", async (t) => {
  const seen: unknown[] = [];
  const tools: ToolSet = {
    count_items: tool({
      description: "Count the items of an order.",
      inputSchema: z.object({ order_id: z.string().transform((value) => value.toUpperCase()) }),
      execute: async function* ({ order_id }) {
        seen.push({ order_id, key: currentToolExecution()?.idempotencyKey });
        yield "counting";
        yield `order ${order_id} has 3 items`;
      },
    }),
  };
  const model = oneToolModel("count_items", { order_id: "ab-1" });
  const flow = createVercelAiAgentSessionFlow(new ToolLoopAgent({ id: "counter", model, instructions: "Count items.", tools }), "AdapterZod", {
    toolPolicies: { count_items: { effect: "read" } },
  });
  const sessions = await startAgent(t, flow);
  await sessions.startSession("zod-1", { initialMessage: "How many items in ab-1?" });
  await sessions.waitForTurnCount("zod-1", 1);
  const snapshot = await sessions.getAgentSnapshot("zod-1");
  const toolMessage = snapshot.messages.find((message) => message.role === "tool");
  assert.equal(toolMessage?.text, "order AB-1 has 3 items");
  assert.deepEqual(seen, [{ order_id: "AB-1", key: `zod-1/turn-1/${toolMessage.toolCallId}` }]);
  const offered = model.doStreamCalls[0]?.tools?.[0];
  assert.equal(offered?.name, "count_items");
  assert.equal(offered?.type, "function");
  assert.deepEqual(offered?.type === "function" ? offered.inputSchema : undefined, {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
    additionalProperties: false,
  });
  assert.deepEqual(model.doStreamCalls[0]?.prompt[0], { role: "system", content: "Count items." });
  assert.equal(snapshot.usage?.requests, 2);
  assert.equal(snapshot.usage?.inputTokens, 60);
});

void test("the next turn replays the stored AI SDK messages to the model unchanged", async (t) => {
  const tools: ToolSet = {
    lookup_order: tool({
      inputSchema: jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] }),
      execute: async ({ order_id }) => `order ${order_id} shipped`,
    }),
  };
  const model = oneToolModel("lookup_order", { order_id: "7" });
  const flow = createVercelAiAgentSessionFlow({ model, instructions: "Help.", tools }, "AdapterReplay", { toolPolicies: { lookup_order: { effect: "read" } } });
  const sessions = await startAgent(t, flow);
  await sessions.startSession("replay-1", { initialMessage: "Where is order 7?" });
  await sessions.waitForTurnCount("replay-1", 1);
  assert.equal(await sessions.sendUserMessage("replay-1", "Thanks"), true);
  await sessions.waitForTurnCount("replay-1", 2);
  const firstTurnEnd = JSON.parse(JSON.stringify(model.doStreamCalls[1]?.prompt)) as unknown[];
  const secondTurnStart = JSON.parse(JSON.stringify(model.doStreamCalls[2]?.prompt)) as unknown[];
  const answer = { role: "assistant", content: [{ type: "text", text: 'Done: [{"type":"text","value":"order 7 shipped"}]' }] };
  assert.deepEqual(secondTurnStart, [...firstTurnEnd, answer, { role: "user", content: [{ type: "text", text: "Thanks" }] }]);
});

void test("agentTools: a call starts a durable child session whose answer returns as the tool result; a tool that is not an agentTool is refused", async (t) => {
  const engine = await PrivateEngine.start();
  const client = new Client({ store: engine.openStore() });
  const researcher = createStepwiseAgentSessionFlow({
    name: "researcher", instructions: "Research.",
    model: new ScriptedModelClient((request) => ({ text: `findings on ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}` })),
  }, "AiSdkChildResearcher");
  const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic.", client });
  const lead = createVercelAiAgentSessionFlow({ id: "lead", model: oneToolModel("research", { task: "tides" }) }, "AiSdkLead", { agentTools: [research] });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [lead, researcher], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(client, lead);
  await sessions.startSession("lead-1", { initialMessage: "Research tides." });
  await sessions.waitForTurnCount("lead-1", 1);
  assert.equal((await sessions.getAgentSnapshot("lead-1")).messages.at(-1)?.text, 'Done: [{"type":"text","value":"findings on tides"}]');
  const [childState] = await client.getAttributes(childSessionId("lead-1", "research", "lead-1/turn-1/call-1"), researcher.agentState);
  assert.equal(childState?.turnCount, 1);
  const plain = functionTool({ name: "plain", description: "", parameters: { type: "object" }, execute: () => "" });
  assert.throws(() => createVercelAiAgentSessionFlow({ id: "bad", model: oneToolModel("plain", {}) }, "AiSdkBadAgentTools", { agentTools: [plain] }), /agentTools of agent bad: "plain" is not an agentTool/);
});

void test("a tool without execute, and a ToolLoopAgent without readable settings, are refused by name", () => {
  const model = oneToolModel("noop", {});
  assert.throws(
    () => createVercelAiAgentSessionFlow({ model, tools: { client_side: tool({ inputSchema: jsonSchema({ type: "object" }) }) } }, "AdapterRefused"),
    /AI SDK tool client_side has no execute function/,
  );
  const agent = new ToolLoopAgent({ model });
  Reflect.set(agent, "settings", undefined);
  assert.throws(() => createVercelAiAgentSessionFlow(agent, "AdapterNoSettings"), /keeps no readable settings/);
  assert.equal(currentToolExecution(), undefined, "no scope outside a tool Step");
});

void test("agent settings the session would drop are refused by name; settings its own loop replaces are named in one warning", (t) => {
  const model = oneToolModel("lookup_order", {});
  const lookupOrder = tool({ inputSchema: z.object({ orderId: z.string() }), execute: ({ orderId }) => `order ${orderId}` });
  for (const [setting, value] of [["activeTools", ["lookup_order"]], ["prepareStep", () => ({})], ["toolApproval", { lookup_order: "user-approval" }]] as const) {
    assert.throws(
      () => createVercelAiAgentSessionFlow({ model, tools: { lookup_order: lookupOrder }, [setting]: value } as never, "Refused"),
      new RegExp(`the AI SDK agent setting ${setting} is refused`),
    );
  }
  const warnings: unknown[] = [];
  t.mock.method(console, "warn", (...args: unknown[]) => warnings.push(args.join(" ")));
  const agent = new ToolLoopAgent({ model, tools: { lookup_order: lookupOrder }, stopWhen: () => false, toolChoice: "auto" });
  createVercelAiAgentSessionFlow(agent, "Warned");
  assert.equal(warnings.length, 1);
  assert.match(String(warnings[0]), /do not apply: stopWhen \(.*maxModelCallsPerTurn\); toolChoice/);
});
