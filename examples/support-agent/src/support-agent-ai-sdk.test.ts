/**
 * The support agent on the real-provider path, without a key: the AI SDK
 * client (`createAiSdkModelClient`, as `model.ts` uses with a key) over a
 * `MockLanguageModelV4` that answers from its prompt as a model would.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { builtInToolDefinitions } from "@perdure/agents";
import { createAiSdkModelClient } from "@perdure/agents/ai-sdk";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { findOrder } from "./orders.ts";
import { createSupportAgentFlow, supportInstructions } from "./support-agent-flow.ts";

type CallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

function text(value: string): StreamPart[] {
  return [{ type: "text-start", id: "text" }, { type: "text-delta", id: "text", delta: value }, { type: "text-end", id: "text" }];
}

function finish(unified: "stop" | "tool-calls"): StreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: { inputTokens: { total: 50, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 10, text: undefined, reasoning: undefined } },
  };
}

/** Looks the order up, or refunds it when asked, then reports the tool's result, as a model following the instructions would. */
function reply({ prompt }: CallOptions): StreamPart[] {
  const lastUser = prompt.findLastIndex((message) => message.role === "user");
  const result = prompt.slice(lastUser + 1).flatMap((message) => (message.role === "tool" ? message.content : []))[0];
  if (result?.type === "tool-result" && result.output.type === "text") {
    return [...text(result.toolName === "lookup_order" ? `Order status: ${(JSON.parse(result.output.value) as { status: string }).status}.` : `Done: ${result.output.value}`), finish("stop")];
  }
  const userMessage = prompt[lastUser];
  const userText = userMessage?.role === "user" ? userMessage.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "";
  const orderId = /\d{4}/.exec(userText)?.[0] ?? "";
  const toolName = /refund/i.test(userText) ? "refund_order" : "lookup_order";
  return [{ type: "tool-call", toolCallId: `call-${lastUser}`, toolName, input: JSON.stringify({ order_id: orderId }) }, finish("tool-calls")];
}

void test("the support agent runs on the AI SDK client: a lookup, then a refund after approval", async () => {
  const model = new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: "gpt-test",
    doStream: async (options) => ({ stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...reply(options)]) }),
  });
  const temporary = createTemporarySqliteStore();
  const flow = createSupportAgentFlow(createAiSdkModelClient(model));
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  try {
    await sessions.start("support-ai-sdk");
    await sessions.sendUserMessage("support-ai-sdk", "Where is order 1001?");
    await sessions.waitForTurnCount("support-ai-sdk", 1);
    assert.equal((await sessions.getAgentSnapshot("support-ai-sdk")).messages.at(-1)?.text, "Order status: shipped.");

    await sessions.sendUserMessage("support-ai-sdk", "Please refund order 1001.");
    const [interrupt] = await sessions.waitForPendingInterrupts("support-ai-sdk");
    assert.deepEqual([interrupt?.toolName, interrupt?.arguments], ["refund_order", '{"order_id":"1001"}']);
    assert.equal(await sessions.resolveInterrupt("support-ai-sdk", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
    await sessions.waitForTurnCount("support-ai-sdk", 2);

    const snapshot = await sessions.getAgentSnapshot("support-ai-sdk");
    assert.equal(snapshot.messages.at(-1)?.text, "Done: refunded 129.00 USD for order 1001 (Trail running shoes)");
    assert.equal(findOrder("1001")?.status, "refunded");
    assert.deepEqual(snapshot.usage, { inputTokens: 200, outputTokens: 40, totalTokens: 240, reasoningTokens: 0, cachedInputTokens: 0, requests: 4 });
    // What the provider was sent: the instructions, both tools with their schemas, the built-in tools, and the whole conversation.
    assert.equal(model.doStreamCalls.length, 4);
    const lastCall = model.doStreamCalls[3];
    assert.deepEqual(lastCall?.prompt[0], { role: "system", content: supportInstructions });
    const offered = lastCall?.tools?.map((tool) => (tool.type === "function" ? [tool.name, tool.inputSchema] : [tool.type])) ?? [];
    assert.deepEqual(offered.slice(0, 2), [
      ["lookup_order", { type: "object", properties: { order_id: { type: "string", description: "The order number, such as 1001." } }, required: ["order_id"], additionalProperties: false }],
      ["refund_order", { type: "object", properties: { order_id: { type: "string", description: "The order number, such as 1001." } }, required: ["order_id"], additionalProperties: false }],
    ]);
    assert.deepEqual(offered.slice(2).map(([name]) => name).toSorted(), ["ask_user", "durable_wait", "write_todos"]);
    for (const [name, schema] of offered.slice(2)) {
      const toolName = name as keyof typeof builtInToolDefinitions;
      assert.deepEqual(schema, builtInToolDefinitions[toolName].parameters, `${toolName} is offered with the contract's schema`);
    }
    assert.deepEqual(lastCall?.prompt.slice(1).map((message) => message.role), ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]);
    const history = await sessions.client.getStepHistory("support-ai-sdk");
    assert.equal(history.filter((entry) => entry.stepType === "RunModel" && entry.method === "execute").length, 4, "one model call per RunModel");
    assert.equal(history.filter((entry) => entry.stepType === "CallSingleAttemptTool" && entry.status === "completed").length, 1);
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});
