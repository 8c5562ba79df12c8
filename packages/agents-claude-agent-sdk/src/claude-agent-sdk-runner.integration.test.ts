/**
 * The Claude Agent SDK adapter's own mapping, with the real Claude Code
 * harness on a loopback fake of the Messages API: a read tool inside the
 * harness, a write deferred to its tool Step after the session's approval,
 * the next turn resumed from the stored transcript, effects from tool
 * annotations, and Claude Code's own tools answered by the session's
 * policies.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import type { AgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine, readStepHistory } from "@perdure/agents/testing";
import { createClaudeAgentSdkSessionFlow } from "./create-claude-agent-sdk-session-flow.ts";
import { currentToolExecution } from "@perdure/agents";
import { readAgentSessionUIMessages, sendAgentUserMessageWithUIMessageStream } from "@perdure/agents/ui-stream";
import { scriptedHarnessOptions } from "./test-fixtures/scripted-harness-options.ts";
import type { FakeMessagesReply, FakeMessagesRequest } from "./testing/fake-messages-api.ts";
import { readFakeRequest } from "./testing/read-fake-request.ts";

async function startAgent(t: TestContext, flow: AgentSessionFlow): Promise<{ sessions: AgentSessionTestClient; engine: PrivateEngine }> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { sessions: new AgentSessionTestClient(environment.client, flow), engine };
}

/** Every chunk of a UI message stream response, read to its end. */
async function readUIStreamChunks(response: Response): Promise<Record<string, unknown>[]> {
  assert.equal(response.status, 200);
  const text = await response.text();
  return text.split("\n").filter((line) => line.startsWith("data: ") && line !== "data: [DONE]").map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

async function completedSteps(engine: PrivateEngine, sessionId: string): Promise<string[]> {
  const history = await readStepHistory(engine.address, sessionId);
  return history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType);
}

function count(types: readonly string[], type: string): number {
  return types.filter((candidate) => candidate === type).length;
}

/** Looks an order up, then refunds it when asked; answers with the tool results. */
function orderDeskScript(request: FakeMessagesRequest): Promise<FakeMessagesReply> {
  const facts = readFakeRequest(request);
  const id = `toolu_${facts.userTextMessages}_${facts.modelCallInTurn}`;
  if (facts.lastUserText.startsWith("Refund") && facts.turnToolResults.length === 0) {
    return Promise.resolve({ kind: "tool_use", id, name: "mcp__perdure__refund_order", input: { order_id: "8" } });
  }
  if (facts.lastUserText.startsWith("Where") && facts.turnToolResults.length === 0) {
    return Promise.resolve({ kind: "tool_use", id, name: "mcp__perdure__lookup_order", input: { order_id: "7" } });
  }
  if (facts.lastUserText.startsWith("Run") && facts.turnToolResults.length === 0) {
    return Promise.resolve({ kind: "tool_use", id, name: "Bash", input: { command: "touch created-by-bash", description: "Create a file" } });
  }
  return Promise.resolve({ kind: "text", text: `Done: ${facts.turnToolResults.map((result) => result.output).join("; ") || facts.lastUserText}` });
}

void test("a read runs inside the harness in RunModel; a write waits for approval and runs once in its tool Step under currentToolExecution(); the next turn resumes the transcript", async (t) => {
  const runs: { tool: string; key: string | undefined }[] = [];
  const lookupOrder = tool("lookup_order", "Look up an order.", { order_id: z.string() }, async ({ order_id }) => {
    runs.push({ tool: "lookup_order", key: currentToolExecution()?.idempotencyKey });
    return { content: [{ type: "text", text: `order ${order_id} shipped` }] };
  }, { annotations: { readOnlyHint: true } });
  const refundOrder = tool("refund_order", "Refund an order.", { order_id: z.string() }, async ({ order_id }) => {
    runs.push({ tool: "refund_order", key: currentToolExecution()?.idempotencyKey });
    return { content: [{ type: "text", text: `refunded order ${order_id}` }] };
  });
  const harness = scriptedHarnessOptions(orderDeskScript);
  const flow = createClaudeAgentSdkSessionFlow({ systemPrompt: "You help with orders.", tools: [lookupOrder, refundOrder] }, "ClaudeOrderDesk", { queryOptions: harness.queryOptions });
  const { sessions, engine } = await startAgent(t, flow);
  const api = await harness.api;

  // The first turn through the live UI stream: the read the harness runs shows as a tool part, input then output.
  await sessions.startSession("desk-1");
  const live = await readUIStreamChunks(await sendAgentUserMessageWithUIMessageStream({ client: sessions.client, flow, flowId: "desk-1", text: "Where is order 7?" }));
  const first = await sessions.waitForTurnCount("desk-1", 1, { timeoutMs: 180_000 });
  const liveInput = live.find((chunk) => chunk.type === "tool-input-available");
  const liveOutput = live.find((chunk) => chunk.type === "tool-output-available");
  assert.ok(liveInput !== undefined && liveOutput !== undefined, `the live stream shows the harness's read: ${JSON.stringify(live.map((chunk) => chunk.type))}`);
  assert.deepEqual({ toolName: liveInput.toolName, input: liveInput.input }, { toolName: "lookup_order", input: { order_id: "7" } });
  assert.deepEqual({ toolCallId: liveOutput.toolCallId, output: liveOutput.output }, { toolCallId: liveInput.toolCallId, output: "order 7 shipped" });
  assert.equal(live.filter((chunk) => chunk.type !== "data-agent-resume-token").at(-1)?.type, "finish");
  // A reload shows the same part: same call, name, input and output.
  const stored = await readAgentSessionUIMessages({ client: sessions.client, flow, flowId: "desk-1" });
  const storedPart = stored.messages.flatMap((message) => message.parts).find((part) => part.type === "dynamic-tool");
  assert.deepEqual(storedPart, { type: "dynamic-tool", toolCallId: liveInput.toolCallId, toolName: "lookup_order", input: { order_id: "7" }, state: "output-available", output: "order 7 shipped" });
  assert.equal(first.lastTurnError, null);
  assert.deepEqual(runs, [{ tool: "lookup_order", key: undefined }], "the read ran inside the harness, outside any tool Step");
  let steps = await completedSteps(engine, "desk-1");
  assert.equal(count(steps, "RunModel"), 1, "the harness made both model calls in one RunModel");
  assert.equal(count(steps, "CallTool"), 0);
  let snapshot = await sessions.getAgentSnapshot("desk-1");
  assert.equal(snapshot.messages.at(-1)?.text, "Done: order 7 shipped");
  assert.equal(snapshot.messages.find((message) => message.role === "tool")?.toolName, "lookup_order");
  assert.equal(snapshot.usage?.requests, 2, "two model calls reported for the one RunModel");

  assert.equal(await sessions.sendUserMessage("desk-1", "Refund order 8."), true);
  const [interrupt] = await sessions.waitForPendingInterrupts("desk-1", 1, { timeoutMs: 180_000 });
  assert.equal(interrupt?.toolName, "refund_order", "the harness's permission prompt became the session's approval");
  assert.equal(runs.length, 1, "nothing ran before the approval");
  assert.equal(await sessions.resolveInterrupt("desk-1", { interruptId: interrupt.interruptId, approved: true }), true);
  const second = await sessions.waitForTurnCount("desk-1", 2, { timeoutMs: 180_000 });
  assert.equal(second.lastTurnError, null);
  snapshot = await sessions.getAgentSnapshot("desk-1");
  const refund = snapshot.messages.find((message) => message.role === "tool" && message.toolName === "refund_order");
  assert.deepEqual(runs[1], { tool: "refund_order", key: `desk-1/turn-2/${refund?.toolCallId}` });
  assert.equal(snapshot.messages.at(-1)?.text, "Done: refunded order 8");
  steps = await completedSteps(engine, "desk-1");
  assert.equal(count(steps, "CallSingleAttemptTool"), 1);
  assert.equal(count(steps, "RunModel"), 3);

  // The last model call resumed the whole session: the first turn, the refund call and its recorded result.
  const last = api.requests.at(-1)!;
  const flat = JSON.stringify(last.messages);
  for (const expected of ["Where is order 7?", "order 7 shipped", "Done: order 7 shipped", "Refund order 8.", "refunded order 8"]) assert.ok(flat.includes(expected), `${expected} in ${flat}`);
  const toolResult = last.messages.at(-1);
  assert.equal(toolResult?.role, "user");
  assert.deepEqual(Array.isArray(toolResult?.content) ? toolResult.content.filter((block) => block.type === "tool_result").map((block) => [block.tool_use_id, block.content]) : [], [[refund?.toolCallId, "refunded order 8"]]);
});

void test("annotations give the effect, and Claude Code's own tools are answered by the session's policies", async (t) => {
  const folder = mkdtempSync(join(tmpdir(), "perdure-claude-bash-"));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const harness = scriptedHarnessOptions(orderDeskScript);
  const lookupOrder = tool("lookup_order", "Look up an order.", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: `order ${order_id} shipped` }] }), { annotations: { readOnlyHint: true } });
  const refundOrder = tool("refund_order", "Refund an order.", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: `refunded order ${order_id}` }] }), { annotations: { idempotentHint: true } });
  const flow = createClaudeAgentSdkSessionFlow({ tools: [lookupOrder, refundOrder] }, "ClaudeEffects", {
    queryOptions: async () => ({ ...(await harness.queryOptions()), tools: ["Bash"], cwd: folder }),
    readToolsRunInHarness: false,
  });
  const { sessions, engine } = await startAgent(t, flow);

  await sessions.startSession("effects-1", { initialMessage: "Refund order 8." });
  await sessions.waitForTurnCount("effects-1", 1, { timeoutMs: 180_000 });
  const steps = await completedSteps(engine, "effects-1");
  assert.equal(count(steps, "CallTool"), 1, "idempotentHint: an idempotent_write, retried in CallTool without approval");
  assert.equal(count(steps, "AwaitToolApproval"), 0);

  await sessions.startSession("bash-1", { initialMessage: "Run a command." });
  await sessions.waitForTurnCount("bash-1", 1, { timeoutMs: 180_000 });
  const bashResult = (await sessions.getAgentSnapshot("bash-1")).messages.find((message) => message.role === "tool");
  assert.equal(bashResult?.toolName, "Bash");
  assert.match(bashResult.text, /Bash needs approval, which a durable session cannot ask for inside the Claude Code harness/);
  assert.equal(existsSync(join(folder, "created-by-bash")), false, "the denied command never ran");
});
