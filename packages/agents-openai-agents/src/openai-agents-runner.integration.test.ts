/**
 * The OpenAI Agents SDK adapter's own mapping, on a real engine: the SDK
 * tool's `needsApproval` evaluated on the call's input, the SDK's RunState
 * as `FrameworkRunState`, stored SDK items replayed unchanged, the whole
 * call from `currentToolExecution()`, and agents the session refuses.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { Agent, handoff, MCPServerStdio, RunContext, RunState, tool, webSearchTool, type ModelRequest } from "@openai/agents";
import { z } from "zod";
import { Client } from "@perdure/engine";
import { describeAgentSessionModel, outcomeUnknownAfterToolErrorResult, subAgentLimitResult, type AgentSessionFlow } from "@perdure/agents";
import { agentTool, childSessionId, createStepwiseAgentSessionFlow, ScriptedModelClient } from "@perdure/agents/stepwise";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine } from "@perdure/agents/testing";
import { createOpenAiAgentsSessionFlow } from "./create-openai-agents-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";
import { hiddenToolErrorMessage, openAiAgentsDefaultToolErrorText } from "./openai-agents-runner.ts";
import { ConformanceSdkModel } from "./test-fixtures/conformance-model.ts";

async function startAgent(t: TestContext, flow: AgentSessionFlow): Promise<{ sessions: AgentSessionTestClient; environment: AgentTestEnvironment }> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { sessions: new AgentSessionTestClient(environment.client, flow), environment };
}

const refundParameters = {
  type: "object" as const,
  properties: { order_id: { type: "string" }, amount: { type: "number" } },
  required: ["order_id", "amount"],
  additionalProperties: false as const,
};

/** Refunds the amount the user names: "Refund 30 on order 8." */
function refundModel(): ConformanceSdkModel {
  return new ConformanceSdkModel({
    reply: async ({ lastUserText, turnToolResults }) => {
      const [, amount, orderId] = /Refund (\d+) on order (\d+)/.exec(lastUserText) ?? [];
      if (amount === undefined || orderId === undefined || turnToolResults.length > 0) return { kind: "text", text: `Done: ${turnToolResults.map((result) => result.output).join("; ")}` };
      return { kind: "tool_call", toolName: "refund_order", arguments: { order_id: orderId, amount: Number(amount) } };
    },
  });
}

void test("the SDK tool's needsApproval runs on the call's input; the call runs with the whole DeferredToolExecution; the RunState is the FrameworkRunState", async (t) => {
  const runs: { key: string | undefined; attempt: number | undefined; toolName: string | undefined }[] = [];
  const refundOrder = tool({
    name: "refund_order",
    description: "Refund an amount on an order.",
    parameters: refundParameters as never,
    strict: false,
    needsApproval: async (_context, input) => (input as { amount: number }).amount > 100,
    execute: async (input) => {
      const execution = currentToolExecution();
      runs.push({ key: execution?.idempotencyKey, attempt: execution?.attempt, toolName: execution?.toolCall.toolName });
      return { refunded: (input as { amount: number }).amount };
    },
  });
  const agent = new Agent({ name: "refunds", instructions: "Refund orders.", model: refundModel(), tools: [refundOrder] });
  const flow = createOpenAiAgentsSessionFlow(agent, "OpenAiRefunds", { defaultToolEffect: "idempotent_write" });
  const { sessions, environment } = await startAgent(t, flow);

  await sessions.startSession("small-1", { initialMessage: "Refund 30 on order 8." });
  await sessions.waitForTurnCount("small-1", 1);
  assert.equal(runs.length, 1, "30 needs no approval");
  const small = await sessions.getAgentSnapshot("small-1");
  assert.equal(small.messages.at(-1)?.text, 'Done: {"refunded":30}');
  const toolCallId = small.messages.find((message) => message.role === "tool")?.toolCallId;
  assert.deepEqual(runs[0], { key: `small-1/turn-1/${toolCallId}`, attempt: 1, toolName: "refund_order" });

  await sessions.startSession("large-1", { initialMessage: "Refund 300 on order 9." });
  const [interrupt] = await sessions.waitForPendingInterrupts("large-1");
  assert.equal(interrupt?.kind, "approval");
  assert.equal(runs.length, 1, "300 waits for approval");
  const [runState] = await environment.client.getAttributes("large-1", flow.frameworkRunState);
  assert.ok(runState !== undefined);
  const restored = await RunState.fromString(agent, runState);
  assert.deepEqual(restored.getInterruptions().map((item) => item.name), ["refund_order"], "FrameworkRunState is the SDK's own serialized RunState");
  assert.equal(await sessions.resolveInterrupt("large-1", { interruptId: interrupt.interruptId, approved: true }), true);
  await sessions.waitForTurnCount("large-1", 1);
  assert.equal(runs.length, 2);
});

void test("the next turn replays the stored SDK items to the model unchanged", async (t) => {
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false } as never,
    strict: false,
    execute: async (input) => `order ${(input as { order_id: string }).order_id} shipped`,
  });
  const model = new ConformanceSdkModel({
    reply: async ({ lastUserText, turnToolResults }) => lastUserText.startsWith("Where") && turnToolResults.length === 0
      ? { kind: "tool_call", toolName: "lookup_order", arguments: { order_id: "7" } }
      : { kind: "text", text: `Answer: ${turnToolResults.map((result) => result.output).join("")}` },
  });
  const agent = new Agent({ name: "orders", instructions: "Help.", model, tools: [lookupOrder] });
  const { sessions } = await startAgent(t, createOpenAiAgentsSessionFlow(agent, "OpenAiReplay", { toolPolicies: { lookup_order: { effect: "read" } } }));
  await sessions.startSession("replay-1", { initialMessage: "Where is order 7?" });
  await sessions.waitForTurnCount("replay-1", 1);
  assert.equal(await sessions.sendUserMessage("replay-1", "Thanks"), true);
  await sessions.waitForTurnCount("replay-1", 2);
  assert.equal(model.requests.length, 3, "one model call per RunModel");
  const inputOf = (request: ModelRequest | undefined): unknown => JSON.parse(JSON.stringify(request?.input));
  const firstTurnEnd = inputOf(model.requests[1]) as unknown[];
  const answer = { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Answer: order 7 shipped" }] };
  assert.deepEqual(inputOf(model.requests[2]), [...firstTurnEnd, answer, { role: "user", content: "Thanks" }]);
  assert.equal(model.requests[0]?.systemInstructions, "Help.");
});

void test("agents with handoffs, another agent's asTool(), MCP servers or hosted tools are refused by name, and no call scope exists outside a tool Step", () => {
  const model = new ConformanceSdkModel({ reply: async () => ({ kind: "text", text: "" }) });
  const helper = new Agent({ name: "helper", model });
  assert.throws(() => createOpenAiAgentsSessionFlow(new Agent({ name: "triage", model, handoffs: [handoff(helper)] }), "Refused1"), /agent triage has handoffs; .*agentTool from @perdure\/agents\/stepwise/);
  const researcher = helper.asTool({ toolName: "research", toolDescription: "Researches." });
  assert.throws(() => createOpenAiAgentsSessionFlow(new Agent({ name: "lead", model, tools: [researcher] }), "RefusedAsTool"), /agent lead has the tool research, another agent's asTool\(\), .*agentTool from @perdure\/agents\/stepwise/);
  // A plain function tool of the same shape is accepted.
  createOpenAiAgentsSessionFlow(new Agent({ name: "plain", model, tools: [tool({ name: "research", description: "Researches.", parameters: z.object({ input: z.string() }), execute: () => "" })] }), "PlainTool");
  const server = new MCPServerStdio({ name: "notes", command: "node", args: ["notes.js"] });
  assert.throws(() => createOpenAiAgentsSessionFlow(new Agent({ name: "notes", model, mcpServers: [server] }), "Refused2"), /agent notes has MCP servers/);
  assert.throws(() => createOpenAiAgentsSessionFlow(new Agent({ name: "search", model, tools: [webSearchTool()] }), "Refused3"), /agent search has the hosted_tool tool/);
  assert.equal(currentToolExecution(), undefined);
});

void test("agentTools: a call starts a durable child session whose answer (and usage) returns as the tool result; the turn's call over maxSubAgentsPerTurn is refused without a child", async (t) => {
  const engine = await PrivateEngine.start();
  const client = new Client({ store: engine.openStore() });
  const researcher = createStepwiseAgentSessionFlow({
    name: "researcher", instructions: "Research.",
    model: new ScriptedModelClient((request) => ({ text: `findings on ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}` })),
  }, "OpenAiChildResearcher");
  const research = agentTool({ flow: researcher, name: "research", description: "Researches one topic.", client });
  // One research call per model call, two in all: the second is over the limit of 1.
  const model = new ConformanceSdkModel({
    reply: async ({ turnToolResults }) => turnToolResults.length < 2
      ? { kind: "tool_call", toolName: "research", arguments: { task: ["tides", "winds"][turnToolResults.length] } }
      : { kind: "text", text: `Report: ${turnToolResults.map((result) => result.output).join(" | ")}` },
  });
  const lead = createOpenAiAgentsSessionFlow(new Agent({ name: "lead", instructions: "Lead.", model }), "OpenAiLead", { agentTools: [research], maxSubAgentsPerTurn: 1 });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [lead, researcher], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(client, lead);
  await sessions.startSession("lead-1", { initialMessage: "Research tides and winds." });
  await sessions.waitForTurnCount("lead-1", 1);
  const snapshot = await sessions.getAgentSnapshot("lead-1");
  assert.equal(snapshot.messages.at(-1)?.text, `Report: findings on tides | ${subAgentLimitResult("research", 1)}`);
  assert.deepEqual(model.requests[0]?.tools.map((offered) => offered.name), ["research"], "the agentTool is offered to the SDK's model");
  const childId = childSessionId("lead-1", "research", "lead-1/turn-1/call-u1-m1");
  const [childState, link] = await client.getAttributes(childId, researcher.agentState, researcher.parentSession);
  assert.equal(childState?.turnCount, 1);
  assert.deepEqual(link, { sessionId: "lead-1", toolCallId: "call-u1-m1", depth: 1 });
  // Three model calls of the lead and one of the child.
  assert.equal(snapshot.usage.requests, 4);
  const second = childSessionId("lead-1", "research", "lead-1/turn-1/call-u1-m2");
  await assert.rejects(client.getAttributes(second, researcher.agentState), "the refused call started no child");
  assert.throws(() => createOpenAiAgentsSessionFlow(new Agent({ name: "bad", model }), "OpenAiBadAgentTools", { agentTools: [tool({ name: "x", description: "", parameters: z.object({}), execute: () => "" })] as never }), /agentTools of agent bad: "x" is not an agentTool/);
});

void test("tools as the SDK's docs write them (the default errorFunction): a throwing read is retried, a throwing write is never recorded as succeeded", async (t) => {
  let readAttempts = 0;
  let writeRuns = 0;
  const lookupOrder = tool({
    name: "lookup_order",
    description: "Look up an order.",
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => {
      readAttempts += 1;
      if (readAttempts < 3) throw new Error("orders database busy");
      return `order ${order_id} shipped`;
    },
  });
  const chargeOrder = tool({
    name: "charge_order",
    description: "Charge an order.",
    parameters: z.object({ order_id: z.string() }),
    execute: async () => {
      writeRuns += 1;
      throw new Error("upstream 503");
    },
  });
  // The SDK's stock text for a thrown error, which the adapter recognizes.
  assert.equal(await chargeOrder.invoke(new RunContext(), JSON.stringify({ order_id: "1" })), openAiAgentsDefaultToolErrorText);
  writeRuns = 0;
  const model = new ConformanceSdkModel({
    reply: async ({ lastUserText, turnToolResults }) => {
      if (turnToolResults.length > 0) return { kind: "text", text: `Done: ${turnToolResults.map((result) => result.output).join("; ")}` };
      return lastUserText.startsWith("Where")
        ? { kind: "tool_call", toolName: "lookup_order", arguments: { order_id: "7" } }
        : { kind: "tool_call", toolName: "charge_order", arguments: { order_id: "13" } };
    },
  });
  const agent = new Agent({ name: "orders", instructions: "Help with orders.", model, tools: [lookupOrder, chargeOrder] });
  const flow = createOpenAiAgentsSessionFlow(agent, "OpenAiDefaultErrors", {
    toolPolicies: { lookup_order: { effect: "read" }, charge_order: { effect: "non_idempotent_write", requiresApproval: false } },
  });
  const { sessions } = await startAgent(t, flow);

  await sessions.startSession("read-1", { initialMessage: "Where is order 7?" });
  await sessions.waitForTurnCount("read-1", 1, { timeoutMs: 60_000 });
  assert.equal(readAttempts, 3, "CallTool retried the read the SDK had turned into text");
  assert.equal((await sessions.getAgentSnapshot("read-1")).messages.at(-1)?.text, "Done: order 7 shipped");

  await sessions.startSession("write-1", { initialMessage: "Charge order 13." });
  await sessions.waitForTurnCount("write-1", 1, { timeoutMs: 60_000 });
  const snapshot = await sessions.getAgentSnapshot("write-1");
  const result = snapshot.messages.find((message) => message.role === "tool")?.text ?? "";
  assert.equal(result, outcomeUnknownAfterToolErrorResult(hiddenToolErrorMessage("charge_order")), "an unknown outcome that says how to see the error, not the stock text as a success");
  assert.equal(writeRuns, 1, "the write ran once");
});

void test("the agent's model name describes the session's model, for perdure dev's banner", () => {
  const named = new Agent({ name: "named", instructions: "Help.", model: "gpt-5-mini" });
  assert.equal(describeAgentSessionModel(createOpenAiAgentsSessionFlow(named, "OpenAiNamedModel")), "gpt-5-mini");
  assert.equal(describeAgentSessionModel(createOpenAiAgentsSessionFlow(named, "OpenAiRunConfigModel", { runConfig: { model: "gpt-5" } })), "gpt-5");
});
