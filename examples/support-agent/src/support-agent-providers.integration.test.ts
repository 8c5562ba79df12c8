/**
 * The demo agent on the real provider path, without a key or a network:
 * `chooseModel` with `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` set and the
 * provider's base URL pointed at a loopback fake of its HTTP API, so the AI
 * SDK's own provider packages build every request and parse every stream.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { createAiSdkModelClient } from "@perdure/agents/ai-sdk";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import type { ModelOutputItem } from "@perdure/agents/stepwise";
import { chooseModel } from "./model.ts";
import { findOrder } from "./orders.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";
import { LoopbackAnthropicMessages } from "./test-fixtures/loopback-anthropic-messages.ts";
import { LoopbackOpenAiResponses } from "./test-fixtures/loopback-openai-responses.ts";
import type { FakeConversation, FakeReply, LoopbackProvider } from "./test-fixtures/loopback-provider.ts";

/** Looks an order up, or refunds it when asked, then reports the tool's result, as a model following the instructions would. */
function supportReply(conversation: FakeConversation): FakeReply {
  const result = conversation.toolResults[0];
  if (result !== undefined) {
    return { text: result.toolName === "lookup_order" ? `Order status: ${(JSON.parse(result.output) as { status: string }).status}.` : `Done: ${result.output}` };
  }
  const orderId = /\d{4}/.exec(conversation.lastUserText)?.[0];
  if (orderId === undefined) return { text: `You said: ${conversation.lastUserText}` };
  return { toolCall: { name: /refund/i.test(conversation.lastUserText) ? "refund_order" : "lookup_order", arguments: { order_id: orderId } } };
}

const providerVariables = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "PERDURE_MODEL"];

/** Sets the provider's variables for this test only. */
function useEnvironment(t: TestContext, values: Record<string, string>): void {
  const saved = new Map(providerVariables.map((name) => [name, process.env[name]]));
  for (const name of providerVariables) delete process.env[name];
  Object.assign(process.env, values);
  t.after(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

/** Runs the support agent on `chooseModel()`'s model through a lookup, a refund after approval, and a turn whose first call gets a 429. */
async function runSupportSession(t: TestContext, fake: LoopbackProvider, orderId: string): Promise<{ sessions: AgentSessionTestClient; description: string }> {
  const { model, description } = await chooseModel();
  const temporary = createTemporarySqliteStore();
  const flow = createSupportAgentFlow(model);
  const worker = new Worker({ store: temporary.store, flows: [flow] });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  const order = findOrder(orderId);
  assert.ok(order !== undefined);
  const amount = `${(order.amountCents / 100).toFixed(2)} USD`;

  await sessions.start("support");
  await sessions.sendUserMessage("support", `Where is order ${orderId}?`);
  await sessions.waitForTurnCount("support", 1);
  assert.equal((await sessions.getAgentSnapshot("support")).messages.at(-1)?.text, `Order status: ${order.status}.`);
  const deltas = (await sessions.readEvents("support")).filter((event) => event.type === "text_delta");
  assert.ok(deltas.length >= 2, `the reply streamed in ${deltas.length} text deltas`);

  await sessions.sendUserMessage("support", `Please refund order ${orderId}.`);
  const [interrupt] = await sessions.waitForPendingInterrupts("support");
  assert.deepEqual([interrupt?.toolName, interrupt?.arguments], ["refund_order", `{"order_id":"${orderId}"}`]);
  assert.equal(await sessions.resolveInterrupt("support", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
  await sessions.waitForTurnCount("support", 2);
  assert.equal((await sessions.getAgentSnapshot("support")).messages.at(-1)?.text, `Done: refunded ${amount} for order ${orderId} (${order.item})`);
  assert.equal(findOrder(orderId)?.status, "refunded");

  // Rate limited: the provider asks for 2 s, longer than RunModel's own first backoff (1 s).
  fake.failNext({ status: 429, headers: { "retry-after": "2" }, body: { error: { message: "Rate limit reached, try again in 2s", type: "rate_limit_error" } } });
  const before = fake.requests.length;
  await sessions.sendUserMessage("support", "thanks");
  await sessions.waitForTurnCount("support", 3);
  assert.equal((await sessions.getAgentSnapshot("support")).messages.at(-1)?.text, "You said: thanks");
  const [limited, retried] = fake.requests.slice(before);
  assert.deepEqual([limited?.status, retried?.status], [429, 200]);
  const waitedMs = (retried?.receivedAt ?? 0) - (limited?.receivedAt ?? 0);
  assert.ok(waitedMs >= 1900, `the retry came ${waitedMs} ms after the 429 that asked for 2000 ms`);
  const failedCall = (await sessions.client.getStepHistory("support")).find((entry) => entry.stepType === "RunModel" && entry.status === "failed");
  assert.match(failedCall?.error ?? "", /the provider asked to retry after 2000 ms/);
  return { sessions, description };
}

void test("the demo agent on OpenAI (a loopback Responses API): streamed text, tools, approval, a 429, and history that needs no stored items", async (t) => {
  const fake = await new LoopbackOpenAiResponses(supportReply).start();
  t.after(() => fake.close());
  useEnvironment(t, { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseUrl });

  const { sessions, description } = await runSupportSession(t, fake, "1002");

  assert.equal(description, "OpenAI gpt-5-mini through the AI SDK");
  assert.ok(fake.requests.every((request) => request.body.store === false), "every request says store: false");
  assert.ok(fake.requests.every((request) => JSON.stringify(request.body.input).includes('"item_reference"') === false), "no request names a stored item");
  const replayedReasoning = fake.requests.at(-1)?.body.input as { type?: string; encrypted_content?: string }[];
  assert.ok(replayedReasoning.filter((item) => item.type === "reasoning").every((item) => item.encrypted_content?.startsWith("sealed:") === true));
  assert.ok(replayedReasoning.filter((item) => item.type === "reasoning").length >= 4, "earlier turns' reasoning is replayed inline");

  // The provider forgets everything: the session goes on, since its history is self-contained.
  fake.forgetStoredItems();
  await sessions.sendUserMessage("support", "still there?");
  await sessions.waitForTurnCount("support", 4);
  assert.equal((await sessions.getAgentSnapshot("support")).messages.at(-1)?.text, "You said: still there?");
});

void test("with useProviderStorage the history names stored items, and a provider that forgot them refuses it with 404", async () => {
  const fake = await new LoopbackOpenAiResponses(supportReply).start();
  try {
    // Imported here: the package makes its default provider from the environment when it loads, which the test above sets first.
    const { createOpenAI } = await import("@ai-sdk/openai");
    const client = createAiSdkModelClient(createOpenAI({ apiKey: "sk-test", baseURL: fake.baseUrl })("gpt-5-mini"), { useProviderStorage: true });
    const request = (input: Parameters<typeof client.call>[0]["input"]): Parameters<typeof client.call>[0] => ({
      flowId: "f", turnId: "t", attempt: 1, instructions: "", input, tools: [], modelSettings: undefined, signal: new AbortController().signal,
      events: { write: async () => {}, textDelta: async () => {}, reasoningDelta: async () => {} },
    });
    const first = await client.call(request([{ type: "user_text", text: "hello" }]));
    const stored: ModelOutputItem = { type: "model_output", provider: first.provider, api: first.api, item: first.item, text: first.text, tool_calls: [] };
    const history = [{ type: "user_text" as const, text: "hello" }, stored, { type: "user_text" as const, text: "again" }];
    await client.call(request(history));
    assert.match(JSON.stringify(fake.requests[1]?.body.input), /"item_reference"/);

    fake.forgetStoredItems();
    await assert.rejects(client.call(request(history)), /Item with id 'rs_1' not found/);
  } finally {
    await fake.close();
  }
});

void test("the demo agent on Anthropic (a loopback Messages API): streamed text, tools, approval and a 429", async (t) => {
  const fake = await new LoopbackAnthropicMessages(supportReply).start();
  t.after(() => fake.close());
  useEnvironment(t, { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: fake.baseUrl });

  const { description } = await runSupportSession(t, fake, "1003");

  assert.equal(description, "Anthropic claude-sonnet-4-5 through the AI SDK");
  const last = fake.requests.at(-1)?.body as { messages: { role: string }[]; tools: { name: string }[] };
  assert.deepEqual(last.tools.map((tool) => tool.name).toSorted(), ["ask_user", "durable_wait", "lookup_order", "refund_order", "write_todos"]);
  assert.equal(last.messages.length, 9, "three turns of user, assistant and tool messages");
});
