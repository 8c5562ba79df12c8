/**
 * Stepwise mode on the real engine with the AI SDK model client: every model
 * call is a `MockLanguageModelV4` scripted from the prompt it receives
 * (`test-fixtures/stepwise-scripted-language-model.ts`), so these tests see
 * exactly what a provider would be sent. They assert on committed state (the
 * snapshot, `AgentState`, `FrameworkRunState`), on the Step history, and on
 * the prompts the model received. The SIGKILL tests run the Worker in child
 * processes and count real runs in an InvocationLog.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import { createAiSdkModelClient } from "../ai-sdk/index.ts";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory, type StepHistoryRecord } from "../testing/read-step-history.ts";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import { currentToolExecution } from "../contract/tool-execution-scope.ts";
import type { AgentDefinition } from "./agent-definition.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import type { JsonSchema } from "./model-client.ts";
import {
  stepwiseCrashDirectoryEnvironmentVariable,
  stepwiseCrashFlows,
  stepwiseCrashGateNames,
  stepwiseCrashLog,
  stepwiseRunModelCrashFlow,
  stepwiseWriteCrashFlow,
  type ModelCallDetails,
  type ToolRunDetails,
} from "./test-fixtures/stepwise-ai-sdk-crash-flows.ts";
import {
  finishPart,
  promptAsJson,
  reasoningParts,
  scriptedLanguageModel,
  scriptedToolCallId,
  textParts,
  toolCallPart,
  type LanguageModelPrompt,
} from "./test-fixtures/stepwise-scripted-language-model.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";

const anthropicIdentity = { provider: "anthropic.messages", modelId: "claude-test" };
const openaiIdentity = { provider: "openai.responses", modelId: "gpt-test" };

const orderIdParameters: JsonSchema = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false };

/** An engine of its own, a Worker in this process running `flows`, and a session client for the first one. */
async function startAgent(t: TestContext, flows: readonly AgentSessionFlow[]): Promise<{ engine: PrivateEngine; environment: AgentTestEnvironment; sessions: AgentSessionTestClient }> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows, workerOptions: { pollIntervalMs: 20 } });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  return { engine, environment, sessions: new AgentSessionTestClient(environment.client, flows[0] as AgentSessionFlow) };
}

function executes(history: readonly StepHistoryRecord[], stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

function completedExecutes(history: readonly StepHistoryRecord[]): string[] {
  return history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType);
}

function frameworkItems(snapshot: AgentSnapshot): unknown[] {
  return snapshot.messages.map((message) => message.frameworkItem);
}

function payloadsOf(events: readonly AgentEvent[], type: AgentEvent["type"]): Record<string, unknown>[] {
  return events.filter((event) => event.type === type).map((event) => event.payload);
}

/** The AI SDK prompt message of a user text. */
function userMessage(text: string): unknown {
  return { role: "user", content: [{ type: "text", text }] };
}

/** The AI SDK prompt message of tool results. */
function toolMessage(results: [toolCallId: string, toolName: string, output: string][]): unknown {
  return { role: "tool", content: results.map(([toolCallId, toolName, output]) => ({ type: "tool-result", toolCallId, toolName, output: { type: "text", value: output } })) };
}

function promptOf(prompt: LanguageModelPrompt | undefined): unknown[] {
  return promptAsJson(prompt);
}

void test("a read tool turn is stored while the tool runs, replayed on the next turn, with one model call per RunModel", async (t) => {
  const lookupGate = Promise.withResolvers<void>();
  t.after(() => lookupGate.resolve());
  let lookupRuns = 0;
  const lookupOrder = functionTool<{ order_id: string }>({
    name: "lookup_order", description: "Look up an order by its ID.", parameters: orderIdParameters, effect: "read",
    execute: async ({ order_id }) => {
      lookupRuns += 1;
      await lookupGate.promise;
      return { order_id, status: "shipped", items: [1, 2] };
    },
  });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    const [result] = facts.turnToolResults;
    if (result !== undefined) return [...textParts("answer", ["Order 7: ", result.output]), finishPart("stop", { input: 40, output: 8 })];
    const orderId = /order (\d+)/.exec(facts.lastUserText)?.[1];
    if (orderId === undefined) return [...textParts("answer", ["You are welcome."]), finishPart("stop", { input: 60, output: 4 })];
    return [...textParts("intro", ["Let me ", "check."]), toolCallPart(scriptedToolCallId(facts, 0), "lookup_order", `{"order_id":"${orderId}"}`), finishPart("tool-calls", { input: 20, output: 5 })];
  });
  const flow = createStepwiseAgentSessionFlow(
    { name: "orders", instructions: (context) => `You help with orders (${context.turnId}).`, model: createAiSdkModelClient(model), tools: [lookupOrder] },
    "StepwiseOrders",
  );
  const { engine, environment, sessions } = await startAgent(t, [flow]);

  await sessions.start("s1", { initialMessage: "Where is order 7?" });
  await pollUntil(async () => (lookupRuns === 1 ? true : undefined), { description: "lookup_order to start" });

  // The tool is still running: the user message and the model output with its call are already committed.
  const during = await sessions.getAgentSnapshot("s1");
  const assistantMessage = {
    role: "assistant",
    content: [
      { type: "text", text: "Let me check." },
      { type: "tool-call", toolCallId: "call-u1-m1-0", toolName: "lookup_order", input: { order_id: "7" } },
    ],
  };
  // Stored as JSON text, as the contract says.
  const modelOutput = {
    type: "model_output",
    provider: "anthropic.messages",
    api: "ai-sdk",
    item: JSON.stringify(assistantMessage),
    text: "Let me check.",
    tool_calls: [{ id: "call-u1-m1-0", name: "lookup_order", arguments: '{"order_id":"7"}' }],
  };
  assert.deepEqual(frameworkItems(during), [{ type: "user_text", text: "Where is order 7?" }, modelOutput]);
  assert.equal(during.state?.status, "running_tools");
  assert.deepEqual(during.toolCalls.map((call) => [call.toolCallId, call.toolName, call.arguments, call.effect, call.requiresApproval, call.status]), [
    ["call-u1-m1-0", "lookup_order", '{"order_id":"7"}', "read", false, "approved"],
  ]);
  const [runState] = await environment.client.getAttributes("s1", flow.frameworkRunState);
  assert.equal(runState, '{"model_calls":1}', "FrameworkRunState holds only the model call count");
  assert.equal(model.doStreamCalls.length, 1);

  lookupGate.resolve();
  await sessions.waitForTurnCount("s1", 1);
  const toolOutput = '{"order_id": "7", "status": "shipped", "items": [1, 2]}';
  const afterTurn = await sessions.getAgentSnapshot("s1");
  assert.deepEqual(frameworkItems(afterTurn).slice(2), [
    { type: "tool_result", tool_call_id: "call-u1-m1-0", tool_name: "lookup_order", output: toolOutput },
    { type: "model_output", provider: "anthropic.messages", api: "ai-sdk", item: JSON.stringify({ role: "assistant", content: [{ type: "text", text: `Order 7: ${toolOutput}` }] }), text: `Order 7: ${toolOutput}`, tool_calls: [] },
  ]);
  assert.deepEqual(afterTurn.usage, { inputTokens: 60, outputTokens: 13, totalTokens: 73, reasoningTokens: 0, cachedInputTokens: 0, requests: 2 });
  const events = await sessions.readEvents("s1");
  assert.deepEqual(payloadsOf(events, "text_delta").map((payload) => payload.text), ["Let me ", "check.", "Order 7: ", toolOutput], "text streamed to AgentEvents as it arrived");

  await sessions.sendUserMessage("s1", "Thanks!");
  await sessions.waitForTurnCount("s1", 2);
  assert.equal(model.doStreamCalls.length, 3);
  assert.deepEqual(promptOf(model.doStreamCalls[2]?.prompt), [
    { role: "system", content: "You help with orders (turn-2)." },
    userMessage("Where is order 7?"),
    assistantMessage,
    toolMessage([["call-u1-m1-0", "lookup_order", toolOutput]]),
    { role: "assistant", content: [{ type: "text", text: `Order 7: ${toolOutput}` }] },
    userMessage("Thanks!"),
  ], "the second turn's prompt replays the first turn from storage");
  assert.equal(lookupRuns, 1);

  const history = await readStepHistory(engine.address, "s1");
  assert.equal(executes(history, "RunModel").length, model.doStreamCalls.length, "exactly one model call per RunModel execution");
  assert.deepEqual(completedExecutes(history), [
    "StartAgentSession", "RunModel", "CallTool", "ResumeTurn", "RunModel", "AwaitUserMessage", "RunModel",
  ]);
});

void test("an approved non_idempotent_write runs once, in CallSingleAttemptTool, after the approval, inside the call's tool-execution scope", async (t) => {
  const runs: { idempotencyKey: string; attempt: number; scopeKey: string | undefined }[] = [];
  const refundOrder = functionTool<{ order_id: string }>({
    name: "refund_order", description: "Refund an order.", parameters: orderIdParameters, effect: "non_idempotent_write",
    execute: ({ order_id }, context) => {
      runs.push({ idempotencyKey: context.idempotencyKey, attempt: context.attempt, scopeKey: currentToolExecution()?.idempotencyKey });
      return `refunded order ${order_id} under ${context.idempotencyKey}`;
    },
  });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    const [result] = facts.turnToolResults;
    if (result !== undefined) return [...textParts("answer", [`Refund: ${result.output}`]), finishPart("stop")];
    return [...textParts("intro", ["I can refund order 7 once you approve."]), toolCallPart(scriptedToolCallId(facts, 0), "refund_order", '{"order_id":"7"}'), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "refunds", instructions: "You refund orders.", model: createAiSdkModelClient(model), tools: [refundOrder] }, "StepwiseRefunds");
  const { engine, sessions } = await startAgent(t, [flow]);

  await sessions.start("w1", { initialMessage: "Please refund order 7." });
  const [interrupt] = await sessions.waitForPendingInterrupts("w1");
  assert.deepEqual([interrupt?.kind, interrupt?.toolCallId, interrupt?.toolName, interrupt?.arguments], ["approval", "call-u1-m1-0", "refund_order", '{"order_id":"7"}']);
  const waiting = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(waiting.toolCalls.map((call) => [call.effect, call.requiresApproval, call.status]), [["non_idempotent_write", true, "awaiting_approval"]]);
  assert.equal((waiting.messages[1]?.frameworkItem as { text?: string }).text, "I can refund order 7 once you approve.", "the model output is stored before the approval");
  assert.deepEqual(runs, [], "nothing runs before the approval");
  assert.equal(model.doStreamCalls.length, 1);

  assert.equal(await sessions.resolveInterrupt("w1", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
  await sessions.waitForTurnCount("w1", 1);

  assert.deepEqual(runs, [{ idempotencyKey: "w1/turn-1/call-u1-m1-0", attempt: 1, scopeKey: "w1/turn-1/call-u1-m1-0" }]);
  assert.equal(currentToolExecution(), undefined, "no scope outside a tool Step");
  const output = "refunded order 7 under w1/turn-1/call-u1-m1-0";
  assert.deepEqual(promptOf(model.doStreamCalls[1]?.prompt).at(-1), toolMessage([["call-u1-m1-0", "refund_order", output]]));
  const snapshot = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text]), [
    ["user", "Please refund order 7."],
    ["assistant", "I can refund order 7 once you approve."],
    ["tool", output],
    ["assistant", `Refund: ${output}`],
  ]);
  const history = await readStepHistory(engine.address, "w1");
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["completed", 1]]);
  assert.deepEqual(executes(history, "CallTool"), []);
  assert.deepEqual(completedExecutes(history), ["StartAgentSession", "RunModel", "AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]);
  assert.equal(executes(history, "RunModel").length, model.doStreamCalls.length);
});

void test("a schema mismatch and an unknown tool reach the model as failed tool results with the validator's message", async (t) => {
  let lookupRuns = 0;
  const lookupOrder = functionTool<{ order_id: string }>({
    name: "lookup_order", description: "Look up an order by its ID.", parameters: orderIdParameters, effect: "read",
    execute: () => {
      lookupRuns += 1;
      return "never";
    },
  });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.turnToolResults.length > 0) return [...textParts("answer", [facts.turnToolResults.map((result) => result.output).join(" | ")]), finishPart("stop")];
    return [
      toolCallPart(scriptedToolCallId(facts, 0), "lookup_order", '{"order_id": 7}'),
      toolCallPart(scriptedToolCallId(facts, 1), "launch_rockets", "{}"),
      finishPart("tool-calls"),
    ];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "orders", instructions: "You look orders up.", model: createAiSdkModelClient(model), tools: [lookupOrder] }, "StepwiseMismatch");
  const { sessions } = await startAgent(t, [flow]);

  await sessions.start("m1", { initialMessage: "Where is order 7?" });
  await sessions.waitForTurnCount("m1", 1);

  const mismatch = "The tool call failed: at $.order_id: 7 is not of type 'string'";
  const unknown = "The tool call failed: unknown tool launch_rockets";
  assert.equal(lookupRuns, 0, "execute never runs with arguments that do not match");
  assert.deepEqual(promptOf(model.doStreamCalls[1]?.prompt).at(-1), toolMessage([["call-u1-m1-0", "lookup_order", mismatch], ["call-u1-m1-1", "launch_rockets", unknown]]));
  const snapshot = await sessions.getAgentSnapshot("m1");
  assert.deepEqual(frameworkItems(snapshot).slice(2, 4), [
    { type: "tool_result", tool_call_id: "call-u1-m1-0", tool_name: "lookup_order", output: mismatch },
    { type: "tool_result", tool_call_id: "call-u1-m1-1", tool_name: "launch_rockets", output: unknown },
  ]);
  assert.equal(snapshot.messages.at(-1)?.text, `${mismatch} | ${unknown}`);
  assert.deepEqual(payloadsOf(await sessions.readEvents("m1"), "tool_call_finished").map((payload) => [payload.tool_name, payload.status]).sort(), [
    ["launch_rockets", "failed"], ["lookup_order", "failed"],
  ]);
});

void test("after maxModelCallsPerTurn the model is offered no tools, and calls it still makes get the limit text", async (t) => {
  let pings = 0;
  const ping = functionTool({ name: "ping", description: "Ping.", parameters: { type: "object", properties: {} }, effect: "read", execute: () => { pings += 1; return "pong"; } });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.lastUserText === "Summarize.") return [...textParts("answer", ["Done."]), finishPart("stop")];
    // Without tools on offer this model still asks for two: both must be refused.
    const calls = facts.toolNames.length === 0 ? 2 : 1;
    return [...textParts("again", ["Again."]), ...Array.from({ length: calls }, (_, index) => toolCallPart(scriptedToolCallId(facts, index), "ping", "{}")), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "looper", instructions: "Ping.", model: createAiSdkModelClient(model), tools: [ping], maxModelCallsPerTurn: 2 }, "StepwiseLimit");
  const { engine, sessions } = await startAgent(t, [flow]);

  await sessions.start("l1", { initialMessage: "Ping forever." });
  const state = await sessions.waitForTurnCount("l1", 1);

  assert.equal(state.lastTurnError, null, "the turn completes");
  assert.deepEqual(model.doStreamCalls.map((call) => (call.tools ?? []).map((tool) => tool.name)), [["ping"], ["ping"], []], "the third call gets no tools");
  assert.equal(pings, 2);
  const limitText = "The tool call was not run: this turn reached its limit of 2 model calls.";
  const snapshot = await sessions.getAgentSnapshot("l1");
  assert.deepEqual(snapshot.messages.slice(-3).map((message) => [message.role, message.toolCallId ?? null, message.text]), [
    ["assistant", null, "Again."],
    ["tool", "call-u1-m3-0", limitText],
    ["tool", "call-u1-m3-1", limitText],
  ]);
  assert.equal(executes(await readStepHistory(engine.address, "l1"), "RunModel").length, 3);

  // The limit is per turn, and the refused calls replay paired with their results.
  await sessions.sendUserMessage("l1", "Summarize.");
  await sessions.waitForTurnCount("l1", 2);
  assert.deepEqual(model.doStreamCalls[3]?.tools?.map((tool) => tool.name), ["ping"]);
  assert.deepEqual(promptOf(model.doStreamCalls[3]?.prompt).slice(-2), [
    toolMessage([["call-u1-m3-0", "ping", limitText], ["call-u1-m3-1", "ping", limitText]]),
    userMessage("Summarize."),
  ]);
});

void test("reasoning and tool calls replay with provider metadata unchanged to the same provider, and without reasoning to another", async (t) => {
  const lookupOrder = functionTool<{ order_id: string }>({
    name: "lookup_order", description: "Look up an order by its ID.", parameters: orderIdParameters, effect: "read",
    execute: ({ order_id }) => `order ${order_id}: shipped`,
  });
  const signed = (facts: { userMessageCount: number; modelCallInTurn: number }) => ({ anthropic: { signature: `sig-u${facts.userMessageCount}-m${facts.modelCallInTurn}` } });
  const anthropicModel = scriptedLanguageModel(anthropicIdentity, (facts) => {
    const thinking = reasoningParts("thinking", ["The user wants ", "an order."], signed(facts));
    if (facts.turnToolResults.length > 0 || facts.userMessageCount > 1) return [...thinking, ...textParts("answer", ["Order 7 has shipped."]), finishPart("stop", { output: 9, reasoning: 4 })];
    return [
      ...thinking,
      ...textParts("intro", ["Let me check."]),
      toolCallPart(scriptedToolCallId(facts, 0), "lookup_order", '{"order_id": "7"}', { anthropic: { cacheTag: "tool-use-1" } }),
      finishPart("tool-calls", { output: 12, reasoning: 4 }),
    ];
  });
  const openaiModel = scriptedLanguageModel(openaiIdentity, () => [
    ...reasoningParts("rs", ["Order 8 next."], { openai: { itemId: "rs_8", reasoningEncryptedContent: "encrypted-8" } }),
    ...textParts("answer", ["Order 8 is processing."]),
    finishPart("stop"),
  ]);
  // One Flow type, two deployments: the agent's model changes between turns.
  const definition = (model: AgentDefinition["model"]): AgentDefinition => ({ name: "orders", instructions: "You help with orders.", model, tools: [lookupOrder] });
  const anthropicFlow = createStepwiseAgentSessionFlow(definition(createAiSdkModelClient(anthropicModel)), "StepwiseReplay");
  const openaiFlow = createStepwiseAgentSessionFlow(definition(createAiSdkModelClient(openaiModel)), "StepwiseReplay");
  const engine = await PrivateEngine.start();
  t.after(() => engine.stop());
  const runTurn = async (flow: AgentSessionFlow, turn: (sessions: AgentSessionTestClient) => Promise<unknown>, turnCount: number): Promise<{ snapshot: AgentSnapshot; events: AgentEvent[] }> => {
    const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], workerOptions: { pollIntervalMs: 20 } });
    try {
      const sessions = new AgentSessionTestClient(environment.client, flow);
      await turn(sessions);
      await sessions.waitForTurnCount("r1", turnCount);
      return { snapshot: await sessions.getAgentSnapshot("r1"), events: await sessions.readEvents("r1") };
    } finally {
      await environment.close();
    }
  };

  const { snapshot: firstTurn, events } = await runTurn(anthropicFlow, (sessions) => sessions.start("r1", { initialMessage: "Where is order 7?" }), 1);
  const signedCall = {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user wants an order.", providerOptions: { anthropic: { signature: "sig-u1-m1" } } },
      { type: "text", text: "Let me check." },
      { type: "tool-call", toolCallId: "call-u1-m1-0", toolName: "lookup_order", input: { order_id: "7" }, providerOptions: { anthropic: { cacheTag: "tool-use-1" } } },
    ],
  };
  const signedAnswer = {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user wants an order.", providerOptions: { anthropic: { signature: "sig-u1-m2" } } },
      { type: "text", text: "Order 7 has shipped." },
    ],
  };
  assert.deepEqual(firstTurn.messages.map((message) => (message.frameworkItem as { item?: string }).item ?? null), [null, JSON.stringify(signedCall), null, JSON.stringify(signedAnswer)], "stored as the AI SDK assistant messages");
  assert.deepEqual(payloadsOf(events, "reasoning_delta").map((payload) => payload.text), ["The user wants ", "an order.", "The user wants ", "an order."], "reasoning streamed to AgentEvents");
  assert.equal(firstTurn.usage.reasoningTokens, 8);
  assert.deepEqual(promptOf(anthropicModel.doStreamCalls[1]?.prompt).slice(2), [signedCall, toolMessage([["call-u1-m1-0", "lookup_order", "order 7: shipped"]])], "same provider: replayed unchanged");

  await runTurn(openaiFlow, (sessions) => sessions.sendUserMessage("r1", "And order 8?"), 2);
  assert.deepEqual(promptOf(openaiModel.doStreamCalls[0]?.prompt), [
    { role: "system", content: "You help with orders." },
    userMessage("Where is order 7?"),
    { role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: "call-u1-m1-0", toolName: "lookup_order", input: { order_id: "7" } }] },
    toolMessage([["call-u1-m1-0", "lookup_order", "order 7: shipped"]]),
    { role: "assistant", content: [{ type: "text", text: "Order 7 has shipped." }] },
    userMessage("And order 8?"),
  ], "another provider: text and tool calls only, no reasoning and no provider options");

  await runTurn(anthropicFlow, (sessions) => sessions.sendUserMessage("r1", "Thanks."), 3);
  assert.deepEqual(promptOf(anthropicModel.doStreamCalls[2]?.prompt).slice(1), [
    userMessage("Where is order 7?"),
    signedCall,
    toolMessage([["call-u1-m1-0", "lookup_order", "order 7: shipped"]]),
    signedAnswer,
    userMessage("And order 8?"),
    { role: "assistant", content: [{ type: "text", text: "Order 8 is processing." }] },
    userMessage("Thanks."),
  ], "back on the first provider: its own outputs unchanged, the other provider's without its encrypted reasoning");
});

void test("a failed turn stores its tool results before the turn failure note, after three RunModel attempts", async (t) => {
  const lookupOrder = functionTool<{ order_id: string }>({
    name: "lookup_order", description: "Look up an order by its ID.", parameters: orderIdParameters, effect: "read",
    execute: ({ order_id }) => `order ${order_id}: shipped`,
  });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.lastUserText === "Try again.") return [...textParts("answer", ["Order 5 has shipped."]), finishPart("stop")];
    if (facts.turnToolResults.length > 0) throw new Error("provider unavailable");
    return [toolCallPart(scriptedToolCallId(facts, 0), "lookup_order", '{"order_id": "5"}'), finishPart("tool-calls", { input: 10, output: 3 })];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "orders", instructions: "You look orders up.", model: createAiSdkModelClient(model), tools: [lookupOrder] }, "StepwiseFailedTurn");
  const { engine, sessions } = await startAgent(t, [flow]);

  await sessions.start("f1", { initialMessage: "Where is order 5?" });
  const state = await sessions.waitForTurnCount("f1", 1);

  assert.equal(state.lastTurnError, "Error: provider unavailable");
  const note = [
    "This turn failed before the assistant could answer. These tool calls ran during it:",
    "- lookup_order (call-u1-m1-0): succeeded: order 5: shipped",
    "Do not repeat these tool calls unless the user asks again.",
  ].join("\n");
  const snapshot = await sessions.getAgentSnapshot("f1");
  assert.deepEqual(snapshot.messages.map((message) => [message.sequence, message.role, (message.frameworkItem as { type: string }).type, message.text]), [
    [1, "user", "user_text", "Where is order 5?"],
    [2, "assistant", "model_output", ""],
    [3, "tool", "tool_result", "order 5: shipped"],
    [4, "system", "user_text", note],
  ]);
  const history = await readStepHistory(engine.address, "f1");
  assert.deepEqual(executes(history, "RunModel"), [["completed", 1], ["failed", 1], ["failed", 2], ["failed", 3]]);
  assert.deepEqual(history.filter((entry) => entry.stepType === "RunModel" && entry.status === "failed").map((entry) => entry.error), Array(3).fill("Error: provider unavailable"));
  assert.deepEqual(executes(history, "RecordTurnFailure"), [["completed", 1]]);
  assert.equal(model.doStreamCalls.length, 4, "one model call per RunModel attempt");
  assert.deepEqual(payloadsOf(await sessions.readEvents("f1"), "turn_failed"), [{ error: "Error: provider unavailable" }]);

  await sessions.sendUserMessage("f1", "Try again.");
  await sessions.waitForTurnCount("f1", 2);
  assert.deepEqual(promptOf(model.doStreamCalls[4]?.prompt).slice(3), [
    toolMessage([["call-u1-m1-0", "lookup_order", "order 5: shipped"]]),
    userMessage(note),
    userMessage("Try again."),
  ], "the next turn's model sees what the failed turn's tools did");
});

void test("a session tool policy wins over a function tool's own effect and approval", async (t) => {
  const runs: string[] = [];
  // Declared a read without approval; the session makes it a write that asks first.
  const refundOrder = functionTool<{ order_id: string }>({
    name: "refund_order", description: "Refund an order.", parameters: orderIdParameters, effect: "read", requiresApproval: false,
    execute: ({ order_id }) => { runs.push("refund_order"); return `refunded ${order_id}`; },
  });
  // Declared a write with approval; the session makes it an idempotent write that runs at once.
  const archiveOrder = functionTool<{ order_id: string }>({
    name: "archive_order", description: "Archive an order.", parameters: orderIdParameters, effect: "non_idempotent_write", requiresApproval: true,
    execute: ({ order_id }) => { runs.push("archive_order"); return `archived ${order_id}`; },
  });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.turnToolResults.length > 0) return [...textParts("answer", [facts.turnToolResults.map((result) => result.output).join(", ")]), finishPart("stop")];
    return [toolCallPart(scriptedToolCallId(facts, 0), "refund_order", '{"order_id": "7"}'), toolCallPart(scriptedToolCallId(facts, 1), "archive_order", '{"order_id": "7"}'), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({
    name: "policies", instructions: "You manage orders.", model: createAiSdkModelClient(model), tools: [refundOrder, archiveOrder],
    toolPolicies: { refund_order: { effect: "non_idempotent_write" }, archive_order: { effect: "idempotent_write", requiresApproval: false } },
  }, "StepwisePolicies");
  const { engine, sessions } = await startAgent(t, [flow]);

  await sessions.start("p1", { initialMessage: "Refund and archive order 7." });
  const [interrupt] = await sessions.waitForPendingInterrupts("p1");
  await pollUntil(async () => (runs.includes("archive_order") ? true : undefined), { description: "archive_order to run without approval" });
  const waiting = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(waiting.toolCalls.map((call) => [call.toolName, call.effect, call.requiresApproval]), [
    ["refund_order", "non_idempotent_write", true],
    ["archive_order", "idempotent_write", false],
  ]);
  assert.deepEqual(waiting.pendingInterrupts.map((pending) => pending.toolName), ["refund_order"]);
  assert.equal(interrupt?.toolName, "refund_order");
  assert.deepEqual(runs, ["archive_order"], "the policy's approval holds the declared read back");

  assert.equal(await sessions.resolveInterrupt("p1", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
  await sessions.waitForTurnCount("p1", 1);
  assert.deepEqual(runs, ["archive_order", "refund_order"]);
  assert.equal((await sessions.getAgentSnapshot("p1")).messages.at(-1)?.text, "refunded 7, archived 7");
  const history = await readStepHistory(engine.address, "p1");
  assert.deepEqual(executes(history, "AwaitToolApproval"), [["completed", 1]]);
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["completed", 1]], "refund_order runs as a single-attempt write");
  assert.deepEqual(executes(history, "CallTool"), [["completed", 1]], "archive_order runs in the retrying tool Step");
});

// The argument messages the Python core gives the model, each checked against
// Python 3.13 `json.loads` and `jsonschema` 4.26 `best_match` (the nested
// location is `at <error.json_path>: `), except the `enum` row: the contract
// compares `enum` with Python's `==`, so `true` matches 1.
const orderSchema: JsonSchema = {
  type: "object",
  properties: { order_id: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
  required: ["order_id", "quantity"],
  additionalProperties: false,
};
const prioritySchema: JsonSchema = { type: "object", properties: { priority: { enum: [1, 2, 3] }, level: { enum: ["low", "high"] } } };
const lineItemsSchema: JsonSchema = {
  type: "object",
  properties: { items: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } } },
};
const shippingSchema: JsonSchema = { type: "object", properties: { "ship to": { type: "object", properties: { zip: { type: "string", minLength: 5 } } } } };
const textSchema: JsonSchema = { type: "object", properties: { code: { pattern: "^[a-z]+$" }, name: { maxLength: 3 }, ratio: { minimum: 0.001 } } };
const schemasByTool: Record<string, JsonSchema> = {
  place_order: orderSchema, set_priority: prioritySchema, add_items: lineItemsSchema, ship: shippingSchema, label: textSchema,
};

interface ArgumentCase { what: string; tool: string; argumentsText: string; expected: { failure: string } | { output: string } }

const argumentCases: ArgumentCase[] = [
  { what: "missing required", tool: "place_order", argumentsText: '{"quantity": 1}', expected: { failure: "'order_id' is a required property" } },
  { what: "no arguments at all", tool: "place_order", argumentsText: "", expected: { failure: "'order_id' is a required property" } },
  { what: "wrong type", tool: "place_order", argumentsText: '{"order_id": 7, "quantity": 1}', expected: { failure: "at $.order_id: 7 is not of type 'string'" } },
  { what: "null", tool: "place_order", argumentsText: '{"order_id": null, "quantity": 1}', expected: { failure: "at $.order_id: None is not of type 'string'" } },
  { what: "a boolean is no integer", tool: "place_order", argumentsText: '{"order_id": "A-1", "quantity": true}', expected: { failure: "at $.quantity: True is not of type 'integer'" } },
  { what: "minimum", tool: "place_order", argumentsText: '{"order_id": "A-1", "quantity": 0}', expected: { failure: "at $.quantity: 0 is less than the minimum of 1" } },
  { what: "additionalProperties", tool: "place_order", argumentsText: '{"order_id": "A-1", "quantity": 1, "note": "fast"}', expected: { failure: "Additional properties are not allowed ('note' was unexpected)" } },
  { what: "additionalProperties, sorted", tool: "place_order", argumentsText: '{"order_id": "A-1", "quantity": 1, "zeta": 1, "beta": 2}', expected: { failure: "Additional properties are not allowed ('beta', 'zeta' were unexpected)" } },
  { what: "enum with Python ==: true matches 1", tool: "set_priority", argumentsText: '{"priority": true}', expected: { output: '{"priority": true}' } },
  { what: "enum: '1' does not match 1", tool: "set_priority", argumentsText: '{"priority": "1"}', expected: { failure: "at $.priority: '1' is not one of [1, 2, 3]" } },
  { what: "enum of strings", tool: "set_priority", argumentsText: '{"level": "HIGH"}', expected: { failure: "at $.level: 'HIGH' is not one of ['low', 'high']" } },
  { what: "nested path", tool: "add_items", argumentsText: '{"items": [{"sku": "a"}, {"sku": 5}]}', expected: { failure: "at $.items[1].sku: 5 is not of type 'string'" } },
  { what: "nested required", tool: "add_items", argumentsText: '{"items": [{"name": "a"}]}', expected: { failure: "at $.items[0]: 'sku' is a required property" } },
  { what: "a key that is no identifier", tool: "ship", argumentsText: '{"ship to": {"zip": "123"}}', expected: { failure: "at $['ship to'].zip: '123' is too short" } },
  { what: "non-ASCII in a repr", tool: "label", argumentsText: '{"code": "ünï"}', expected: { failure: "at $.code: 'ünï' does not match '^[a-z]+$'" } },
  { what: "a quote in a repr", tool: "label", argumentsText: '{"name": "O\'Brien"}', expected: { failure: "at $.name: \"O'Brien\" is too long" } },
  { what: "a small float's repr", tool: "label", argumentsText: '{"ratio": 1e-05}', expected: { failure: "at $.ratio: 1e-05 is less than the minimum of 0.001" } },
  { what: "not an object", tool: "place_order", argumentsText: "[1, 2]", expected: { failure: "[1, 2] is not of type 'object'" } },
  { what: "invalid JSON", tool: "place_order", argumentsText: '{"order_id": }', expected: { failure: "Invalid JSON arguments: Expecting value: line 1 column 14 (char 13)" } },
  { what: "truncated JSON", tool: "place_order", argumentsText: '{"order_id": "A-1", "quant', expected: { failure: "Invalid JSON arguments: Unterminated string starting at: line 1 column 21 (char 20)" } },
  { what: "single quotes", tool: "place_order", argumentsText: "{'order_id': 'A-1'}", expected: { failure: "Invalid JSON arguments: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)" } },
  { what: "a trailing comma, columns in code points", tool: "label", argumentsText: '{"name": "😀", }', expected: { failure: "Invalid JSON arguments: Illegal trailing comma before end of object: line 1 column 13 (char 12)" } },
];

void test("the argument messages shared with Python reach the model as `The tool call failed: <message>`", async (t) => {
  const runs: string[] = [];
  const tools = Object.entries(schemasByTool).map(([name, parameters]) => functionTool({
    name, description: `The ${name} tool.`, parameters, effect: "read",
    execute: (argumentsValue) => { runs.push(name); return argumentsValue; },
  }));
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.turnToolResults.length > 0) return [...textParts("answer", ["Checked."]), finishPart("stop")];
    return [...argumentCases.map((row, index) => toolCallPart(scriptedToolCallId(facts, index), row.tool, row.argumentsText)), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "arguments", instructions: "Call the tools.", model: createAiSdkModelClient(model), tools }, "StepwiseArguments");
  const { sessions } = await startAgent(t, [flow]);

  await sessions.start("a1", { initialMessage: "Go." });
  await sessions.waitForTurnCount("a1", 1);

  const expectedResults = argumentCases.map((row, index): [string, string, string] => [
    scriptedToolCallId({ userMessageCount: 1, modelCallInTurn: 1 }, index),
    row.tool,
    "failure" in row.expected ? `The tool call failed: ${row.expected.failure}` : row.expected.output,
  ]);
  const snapshot = await sessions.getAgentSnapshot("a1");
  const stored = snapshot.messages.filter((message) => message.role === "tool").map((message): [string, string, string] => [message.toolCallId ?? "", message.toolName ?? "", message.text]);
  for (const [index, row] of argumentCases.entries()) {
    assert.deepEqual(stored[index], expectedResults[index], `${row.what}: ${row.argumentsText}`);
  }
  assert.equal(stored.length, argumentCases.length);
  assert.deepEqual(frameworkItems(snapshot).filter((item) => (item as { type: string }).type === "tool_result").map((item) => (item as { output: string }).output), expectedResults.map(([, , output]) => output));
  assert.deepEqual(promptOf(model.doStreamCalls[1]?.prompt).at(-1), toolMessage(expectedResults), "the model received each message");
  assert.deepEqual(runs, ["set_priority"], "only the matching call ran");
});

const workerEntryModulePath = fileURLToPath(new URL("./test-fixtures/stepwise-ai-sdk-worker-main.ts", import.meta.url));

/** A private engine with Worker child processes; this process only reads and calls RPCs. */
async function startCrashHarness(t: TestContext) {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: stepwiseCrashFlows, isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  return {
    engine,
    client: environment.client,
    log: stepwiseCrashLog(engine.directory),
    gate: (name: string) => new FileGate(engine.directory, name),
    startWorkerProcess: async () => {
      const workerProcess = await KillableWorkerProcess.start({
        entryModulePath: workerEntryModulePath,
        engineAddress: engine.address,
        environment: { [stepwiseCrashDirectoryEnvironmentVariable]: engine.directory },
      });
      workerProcesses.push(workerProcess);
      return workerProcess;
    },
  };
}

void test("SIGKILL during RunModel: a new Worker process reruns the model call from the same committed state, and the turn completes once", { timeout: 300_000 }, async (t) => {
  const harness = await startCrashHarness(t);
  const flow = stepwiseRunModelCrashFlow;
  const sessions = new AgentSessionTestClient(harness.client, flow);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("k1", { initialMessage: "Where is order 7?" });
  // The first model call asked for lookup_order; the second, which reads its result, parks at the gate.
  await harness.gate(stepwiseCrashGateNames.runModel).waitUntilReached();
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  await sessions.waitForTurnCount("k1", 1, { timeoutMs: 20_000 });

  const calls = harness.log.entries().filter((entry) => entry.name === "model_call");
  assert.deepEqual(calls.map((call) => [(call.details as ModelCallDetails).modelCallInTurn, call.processId]), [[1, doomed.pid], [2, doomed.pid], [2, survivor.pid]]);
  assert.deepEqual((calls[2]?.details as ModelCallDetails).prompt, (calls[1]?.details as ModelCallDetails).prompt, "the rerun got the same prompt");
  assert.equal(harness.log.count("lookup_order"), 1, "the committed tool call was not repeated");

  const snapshot = await sessions.getAgentSnapshot("k1");
  assert.deepEqual(snapshot.messages.map((message) => [message.sequence, message.role, message.text]), [
    [1, "user", "Where is order 7?"],
    [2, "assistant", "Let me look."],
    [3, "tool", "order 7: shipped"],
    [4, "assistant", "Order 7: order 7: shipped"],
  ], "every message is stored once");
  assert.equal(snapshot.state?.lastTurnError, null);
  assert.equal(snapshot.usage.requests, 2, "the killed call's usage is not counted");
  const events = (await harness.client.readStream("k1", flow.agentEvents, { limit: 1000 })).messages.map((message) => message.value);
  assert.equal(payloadsOf(events, "turn_completed").length, 1);

  const history = await readStepHistory(harness.engine.address, "k1");
  assert.deepEqual(executes(history, "RunModel"), [["completed", 1], ["failed", 1], ["completed", 2]]);
  assert.match(history.filter((entry) => entry.stepType === "RunModel")[1]?.error ?? "", /^WorkerLost: /);
  assert.equal(executes(history, "RunModel").length, calls.length, "one model call per RunModel attempt, the killed one included");
  assert.deepEqual(completedExecutes(history), ["StartAgentSession", "RunModel", "CallTool", "ResumeTurn", "RunModel"]);
});

void test("SIGKILL during a single-attempt write: the write never runs again, and the model sees outcome_unknown", { timeout: 300_000 }, async (t) => {
  const harness = await startCrashHarness(t);
  const flow = stepwiseWriteCrashFlow;
  const sessions = new AgentSessionTestClient(harness.client, flow);
  const gate = harness.gate(stepwiseCrashGateNames.singleAttemptWrite);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("k2", { initialMessage: "Pay the 12 EUR invoice." });
  const [interrupt] = await sessions.waitForPendingInterrupts("k2");
  assert.equal(await sessions.resolveInterrupt("k2", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
  await gate.waitUntilReached();
  await doomed.kill();
  // A wrongful rerun would pass the open gate, so the log would show it.
  gate.open();
  const survivor = await harness.startWorkerProcess();
  const state = await sessions.waitForTurnCount("k2", 1, { timeoutMs: 20_000 });

  assert.deepEqual(harness.log.entries().filter((entry) => entry.name === "send_payment").map((entry) => [entry.processId, entry.details as ToolRunDetails]), [
    [doomed.pid, { toolCallId: "call-u1-m1-0", idempotencyKey: "k2/turn-1/call-u1-m1-0", attempt: 1 }],
  ], "the write ran once, in the killed process");
  assert.equal(state.lastTurnError, null);
  const calls = harness.log.entries().filter((entry) => entry.name === "model_call");
  assert.deepEqual(calls.map((call) => call.processId), [doomed.pid, survivor.pid]);
  assert.deepEqual((calls[1]?.details as ModelCallDetails).prompt.at(-1), toolMessage([["call-u1-m1-0", "send_payment", outcomeUnknownToolResult]]));

  const snapshot = await sessions.getAgentSnapshot("k2");
  assert.deepEqual(snapshot.messages.slice(2).map((message) => message.frameworkItem), [
    { type: "tool_result", tool_call_id: "call-u1-m1-0", tool_name: "send_payment", output: outcomeUnknownToolResult },
    { type: "model_output", provider: "anthropic.messages", api: "ai-sdk", item: JSON.stringify({ role: "assistant", content: [{ type: "text", text: `Payment result: ${outcomeUnknownToolResult}` }] }), text: `Payment result: ${outcomeUnknownToolResult}`, tool_calls: [] },
  ]);
  const events = (await harness.client.readStream("k2", flow.agentEvents, { limit: 1000 })).messages.map((message) => message.value);
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["outcome_unknown"]);

  const history = await readStepHistory(harness.engine.address, "k2");
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["failed", 1]]);
  assert.match(history.find((entry) => entry.stepType === "CallSingleAttemptTool")?.error ?? "", /^WorkerLost: /);
  assert.deepEqual(executes(history, "RecordToolOutcomeUnknown"), [["completed", 1]]);
  assert.deepEqual(completedExecutes(history), ["StartAgentSession", "RunModel", "AwaitToolApproval", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"]);
});
