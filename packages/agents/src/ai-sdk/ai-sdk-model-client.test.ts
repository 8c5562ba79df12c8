import assert from "node:assert/strict";
import { test } from "node:test";
import { APICallError, customProvider } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import type { ModelOutputItem, ModelRequest, ModelResponse, ModelSettings, ModelToolDefinition, StepwiseInputItem } from "../stepwise/model-client.ts";
import type { AgentEventType, AgentEventWriter } from "../contract/values/agent-event.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import { RetryAfterError } from "@perdure/engine";
import { createAiSdkModelClient } from "./index.ts";
import { genAIProviderName } from "./ai-sdk-model-response.ts";

type DoStreamOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type ModelPrompt = DoStreamOptions["prompt"];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

/** An `AgentEventWriter` that records every call, in order. */
class RecordingEventWriter implements AgentEventWriter {
  readonly calls: [string, unknown][] = [];

  async write(type: AgentEventType, payload: Record<string, unknown>): Promise<void> {
    this.calls.push([type, payload]);
  }

  async textDelta(text: string): Promise<void> {
    this.calls.push(["text_delta", text]);
  }

  async reasoningDelta(text: string): Promise<void> {
    this.calls.push(["reasoning_delta", text]);
  }
}

/** A mock model whose stream is computed from the prompt it receives, as a real model's would be. */
function scriptedModel(reply: (prompt: ModelPrompt) => StreamPart[], identity: { provider: string; modelId: string }): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    ...identity,
    doStream: async ({ prompt }) => ({ stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...reply(prompt)]) }),
  });
}

const anthropicIdentity = { provider: "anthropic.messages", modelId: "claude-test" };
const openaiIdentity = { provider: "openai.responses", modelId: "gpt-test" };

function textParts(id: string, deltas: string[]): StreamPart[] {
  return [{ type: "text-start", id }, ...deltas.map((delta): StreamPart => ({ type: "text-delta", id, delta })), { type: "text-end", id }];
}

function finish(unified: "stop" | "tool-calls", tokens: { input?: number; cacheRead?: number; output?: number; reasoning?: number } = {}): StreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: {
      inputTokens: { total: tokens.input, noCache: undefined, cacheRead: tokens.cacheRead, cacheWrite: undefined },
      outputTokens: { total: tokens.output, text: undefined, reasoning: tokens.reasoning },
    },
  };
}

function lastUserText(prompt: ModelPrompt): string {
  const message = prompt.findLast((candidate) => candidate.role === "user");
  if (message?.role !== "user") return "";
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function modelRequest(input: StepwiseInputItem[], options: { events?: AgentEventWriter; tools?: ModelToolDefinition[]; modelSettings?: ModelSettings; signal?: AbortSignal } = {}): ModelRequest {
  return {
    flowId: "flow-1",
    turnId: "turn-1",
    attempt: 1,
    instructions: "You help customers with their orders.",
    input,
    tools: options.tools ?? [],
    modelSettings: options.modelSettings,
    events: options.events ?? new RecordingEventWriter(),
    signal: options.signal ?? new AbortController().signal,
  };
}

/** What the Stepwise runner stores for a response, after its trip through JSON storage. */
function storedModelOutput(response: ModelResponse): ModelOutputItem {
  const item: ModelOutputItem = {
    type: "model_output",
    provider: response.provider,
    api: response.api,
    item: response.item,
    text: response.text,
    tool_calls: response.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.arguments })),
  };
  return JSON.parse(JSON.stringify(item)) as ModelOutputItem;
}

/** The prompt as JSON data, so an absent property and one set to `undefined` compare equal. */
function promptAsJson(prompt: unknown): unknown[] {
  return JSON.parse(JSON.stringify(prompt ?? null)) as unknown[];
}

const lookupOrderTool: ModelToolDefinition = {
  name: "lookup_order",
  description: "Look up an order by its ID.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
};

void test("text deltas reach AgentEvents in order, and the response carries the text, usage, provider and metadata", async () => {
  const model = scriptedModel(
    (prompt) => [
      { type: "response-metadata", id: "msg-42", modelId: "claude-test-20260101" },
      ...textParts("text-1", ["You ", "said: ", lastUserText(prompt)]),
      finish("stop", { input: 12, cacheRead: 4, output: 7 }),
    ],
    anthropicIdentity,
  );
  const events = new RecordingEventWriter();

  const response = await createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "where is my order?" }], { events }));

  assert.deepEqual(events.calls, [
    ["text_delta", "You "],
    ["text_delta", "said: "],
    ["text_delta", "where is my order?"],
  ]);
  assert.equal(response.text, "You said: where is my order?");
  assert.deepEqual(response.toolCalls, []);
  assert.deepEqual(response.usage, { inputTokens: 12, outputTokens: 7, totalTokens: 19, reasoningTokens: 0, cachedInputTokens: 4, requests: 1 });
  assert.equal(response.provider, "anthropic.messages");
  assert.equal(response.api, "ai-sdk");
  assert.deepEqual(JSON.parse(response.item as string), { role: "assistant", content: [{ type: "text", text: "You said: where is my order?" }] });
  assert.deepEqual(response.metadata, {
    requestModel: "claude-test",
    responseModel: "claude-test-20260101",
    providerName: "anthropic",
    responseId: "msg-42",
    finishReasons: ["stop"],
  });
  assert.deepEqual(promptAsJson(model.doStreamCalls[0]?.prompt), [
    { role: "system", content: "You help customers with their orders." },
    { role: "user", content: [{ type: "text", text: "where is my order?" }] },
  ]);
});

void test("usage numbers the provider does not report count as 0", async () => {
  const model = scriptedModel(() => [...textParts("text-1", ["Hi"]), finish("stop")], anthropicIdentity);

  const response = await createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "hello" }]));

  assert.deepEqual(response.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0, requests: 1 });
});

void test("model settings pass through, reasoningEffort as the AI SDK reasoning option and provider options merged over the client's", async () => {
  const model = scriptedModel(() => [...textParts("text-1", ["ok"]), finish("stop")], openaiIdentity);
  const client = createAiSdkModelClient(model, { providerOptions: { openai: { reasoningSummary: "auto", store: false }, anthropic: { sendReasoning: true } } });

  await client.call(
    modelRequest([{ type: "user_text", text: "hello" }], {
      modelSettings: { temperature: 0.25, maxOutputTokens: 800, reasoningEffort: "high", providerOptions: { openai: { store: true } } },
    }),
  );

  const options = model.doStreamCalls[0];
  assert.equal(options?.temperature, 0.25);
  assert.equal(options?.maxOutputTokens, 800);
  assert.equal(options?.reasoning, "high");
  assert.deepEqual(options?.providerOptions, { openai: { reasoningSummary: "auto", store: true }, anthropic: { sendReasoning: true } });
});

void test("a tool call comes back with JSON arguments from exactly one model call, and no tool runs", async () => {
  const model = scriptedModel(
    (prompt) =>
      prompt.some((message) => message.role === "tool")
        ? [...textParts("text-2", ["Order A1 has shipped."]), finish("stop")]
        : [
            { type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: JSON.stringify({ order_id: "A1" }) },
            finish("tool-calls", { input: 30, output: 9 }),
          ],
    openaiIdentity,
  );
  const refundTool: ModelToolDefinition = { name: "refund_order", description: "Refund an order.", parameters: { type: "object", properties: {} } };
  const client = createAiSdkModelClient(model);

  const response = await client.call(modelRequest([{ type: "user_text", text: "where is A1?" }], { tools: [refundTool, lookupOrderTool] }));

  assert.equal(model.doStreamCalls.length, 1, "one streamText step makes one model call, even when the model asks for a tool");
  assert.deepEqual(response.toolCalls, [{ toolCallId: "call-1", toolName: "lookup_order", arguments: '{"order_id":"A1"}' }]);
  assert.equal(response.text, "");
  assert.deepEqual(JSON.parse(response.item as string), {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: { order_id: "A1" } }],
  });
  // The tools are offered as definitions, in the runner's order; none has an execute function to run.
  assert.deepEqual(promptAsJson(model.doStreamCalls[0]?.tools), [
    { type: "function", name: "refund_order", description: "Refund an order.", inputSchema: refundTool.parameters },
    { type: "function", name: "lookup_order", description: "Look up an order by its ID.", inputSchema: lookupOrderTool.parameters },
  ]);

  const followUp = await client.call(
    modelRequest(
      [
        { type: "user_text", text: "where is A1?" },
        storedModelOutput(response),
        { type: "tool_result", tool_call_id: "call-1", tool_name: "lookup_order", output: '{"status":"shipped"}' },
      ],
      { tools: [refundTool, lookupOrderTool] },
    ),
  );

  assert.equal(model.doStreamCalls.length, 2);
  assert.equal(followUp.text, "Order A1 has shipped.");
  assert.deepEqual(promptAsJson(model.doStreamCalls[1]?.prompt).slice(-1), [
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call-1", toolName: "lookup_order", output: { type: "text", value: '{"status":"shipped"}' } }] },
  ]);
});

/** A mock of a model that signs its thinking and requires the signature back, as Anthropic's does. */
function signingModel(): MockLanguageModelV4 {
  return scriptedModel((prompt) => {
    const assistantMessages = prompt.filter((message) => message.role === "assistant");
    if (assistantMessages.length === 0) {
      return [
        { type: "reasoning-start", id: "reasoning-1" },
        { type: "reasoning-delta", id: "reasoning-1", delta: "The user wants " },
        { type: "reasoning-delta", id: "reasoning-1", delta: "order A1." },
        { type: "reasoning-end", id: "reasoning-1", providerMetadata: { anthropic: { signature: "sig-abc" } } },
        ...textParts("text-1", ["Checking."]),
        { type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: '{"order_id":"A1"}' },
        finish("tool-calls", { input: 20, output: 15, reasoning: 8 }),
      ];
    }
    const signed = assistantMessages.every((message) =>
      message.content.some((part) => part.type === "reasoning" && part.providerOptions?.anthropic?.signature === "sig-abc"),
    );
    return [...textParts("text-2", [signed ? "A1 has shipped." : "thinking block is missing its signature"]), finish("stop")];
  }, anthropicIdentity);
}

async function signedResponse(): Promise<{ response: ModelResponse; events: RecordingEventWriter }> {
  const events = new RecordingEventWriter();
  const response = await createAiSdkModelClient(signingModel()).call(modelRequest([{ type: "user_text", text: "where is A1?" }], { events, tools: [lookupOrderTool] }));
  return { response, events };
}

void test("reasoning with a signature is stored unchanged and replayed to the same provider with its provider options", async () => {
  const { response, events } = await signedResponse();

  assert.deepEqual(events.calls, [
    ["reasoning_delta", "The user wants "],
    ["reasoning_delta", "order A1."],
    ["text_delta", "Checking."],
  ]);
  assert.equal(response.usage.reasoningTokens, 8);
  const storedAssistantMessage = {
    role: "assistant",
    content: [
      { type: "reasoning", text: "The user wants order A1.", providerOptions: { anthropic: { signature: "sig-abc" } } },
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: { order_id: "A1" } },
    ],
  };
  assert.deepEqual(JSON.parse(response.item as string), storedAssistantMessage);

  const model = signingModel();
  const replay = await createAiSdkModelClient(model).call(
    modelRequest(
      [
        { type: "user_text", text: "where is A1?" },
        storedModelOutput(response),
        { type: "tool_result", tool_call_id: "call-1", tool_name: "lookup_order", output: "shipped" },
      ],
      { tools: [lookupOrderTool] },
    ),
  );

  assert.equal(replay.text, "A1 has shipped.");
  const prompt = promptAsJson(model.doStreamCalls[0]?.prompt);
  assert.deepEqual(prompt[2], storedAssistantMessage);
});

void test("a stored output replayed to a different provider sends only its text and tool calls", async () => {
  const { response } = await signedResponse();
  const model = scriptedModel(() => [...textParts("text-1", ["A1 has shipped."]), finish("stop")], openaiIdentity);

  await createAiSdkModelClient(model).call(
    modelRequest([
      { type: "user_text", text: "where is A1?" },
      storedModelOutput(response),
      { type: "tool_result", tool_call_id: "call-1", tool_name: "lookup_order", output: "shipped" },
    ]),
  );

  assert.deepEqual(promptAsJson(model.doStreamCalls[0]?.prompt), [
    { role: "system", content: "You help customers with their orders." },
    { role: "user", content: [{ type: "text", text: "where is A1?" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool-call", toolCallId: "call-1", toolName: "lookup_order", input: { order_id: "A1" } },
      ],
    },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call-1", toolName: "lookup_order", output: { type: "text", value: "shipped" } }] },
  ]);
});

void test("a retryable model error rejects the call after one request: the client never retries", async () => {
  const overloaded = new APICallError({ message: "Overloaded", url: "https://api.example.test/v1/messages", requestBodyValues: {}, statusCode: 529, isRetryable: true });
  const model = new MockLanguageModelV4({
    ...anthropicIdentity,
    doStream: async () => {
      throw overloaded;
    },
  });

  await assert.rejects(createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "hello" }])), (error: unknown) => error === overloaded);
  assert.equal(model.doStreamCalls.length, 1);
});

void test("an error inside the model's stream rejects the call after the deltas before it", async () => {
  const streamError = new Error("connection reset mid-stream");
  const model = scriptedModel(() => [{ type: "text-start", id: "text-1" }, { type: "text-delta", id: "text-1", delta: "Par" }, { type: "error", error: streamError }], anthropicIdentity);
  const events = new RecordingEventWriter();

  await assert.rejects(createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "hello" }], { events })), (error: unknown) => error === streamError);
  assert.equal(model.doStreamCalls.length, 1);
  assert.deepEqual(events.calls, [["text_delta", "Par"]]);
});

void test("aborting the request signal rejects the call with the signal's reason", async () => {
  const controller = new AbortController();
  const model = new MockLanguageModelV4({
    ...anthropicIdentity,
    doStream: async ({ abortSignal }) => ({
      stream: new ReadableStream<StreamPart>({
        start(streamController) {
          streamController.enqueue({ type: "text-start", id: "text-1" });
          streamController.enqueue({ type: "text-delta", id: "text-1", delta: "Hel" });
          abortSignal?.addEventListener("abort", () => streamController.error(abortSignal.reason));
        },
      }),
    }),
  });
  const cancelled = new Error("turn cancelled");
  const events: AgentEventWriter = {
    write: async () => {},
    reasoningDelta: async () => {},
    textDelta: async () => controller.abort(cancelled),
  };

  await assert.rejects(createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "hello" }], { events, signal: controller.signal })), (error: unknown) => error === cancelled);
});

void test("a stored tool call without a result gets the outcome-unknown text, and a result without a call is left out", async () => {
  const model = scriptedModel(() => [...textParts("text-1", ["ok"]), finish("stop")], openaiIdentity);
  const orphanCall: ModelOutputItem = {
    type: "model_output",
    provider: "another.provider",
    api: "ai-sdk",
    item: null,
    text: "",
    tool_calls: [{ id: "call-9", name: "refund_order", arguments: "not json" }],
  };

  await createAiSdkModelClient(model).call(
    modelRequest([
      { type: "user_text", text: "refund A1" },
      orphanCall,
      { type: "user_text", text: "did it work?" },
      { type: "tool_result", tool_call_id: "call-unknown", tool_name: "refund_order", output: "lost" },
    ]),
  );

  assert.deepEqual(promptAsJson(model.doStreamCalls[0]?.prompt).slice(1), [
    { role: "user", content: [{ type: "text", text: "refund A1" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "call-9", toolName: "refund_order", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call-9", toolName: "refund_order", output: { type: "text", value: outcomeUnknownToolResult } }] },
    { role: "user", content: [{ type: "text", text: "did it work?" }] },
  ]);
});

void test("a string model ID resolves through the AI SDK's default provider, whose model names the provider", async (t) => {
  const model = scriptedModel(() => [...textParts("text-1", ["ok"]), finish("stop")], anthropicIdentity);
  const previousProvider = globalThis.AI_SDK_DEFAULT_PROVIDER;
  globalThis.AI_SDK_DEFAULT_PROVIDER = customProvider({ languageModels: { "claude-test": model } });
  t.after(() => {
    globalThis.AI_SDK_DEFAULT_PROVIDER = previousProvider;
  });

  const response = await createAiSdkModelClient("claude-test").call(modelRequest([{ type: "user_text", text: "hello" }]));

  assert.equal(response.provider, "anthropic.messages");
  assert.equal(response.metadata?.requestModel, "claude-test");
  assert.equal(model.doStreamCalls.length, 1);
});

void test("OpenAI Responses history is self-contained by default: store is false unless the client or the agent opts back in", async () => {
  const reply = (): StreamPart[] => [...textParts("text-1", ["ok"]), finish("stop")];
  const request = (modelSettings?: ModelSettings): ModelRequest => modelRequest([{ type: "user_text", text: "hello" }], modelSettings === undefined ? {} : { modelSettings });
  const byDefault = scriptedModel(reply, openaiIdentity);
  const optedIn = scriptedModel(reply, openaiIdentity);
  const agentSetting = scriptedModel(reply, openaiIdentity);
  const anthropic = scriptedModel(reply, anthropicIdentity);

  await createAiSdkModelClient(byDefault, { providerOptions: { openai: { reasoningSummary: "auto" } } }).call(request());
  await createAiSdkModelClient(optedIn, { useProviderStorage: true }).call(request());
  await createAiSdkModelClient(agentSetting).call(request({ providerOptions: { openai: { store: true } } }));
  await createAiSdkModelClient(anthropic).call(request());

  assert.deepEqual(byDefault.doStreamCalls[0]?.providerOptions, { openai: { store: false, reasoningSummary: "auto" } });
  assert.equal(optedIn.doStreamCalls[0]?.providerOptions, undefined);
  assert.deepEqual(agentSetting.doStreamCalls[0]?.providerOptions, { openai: { store: true } });
  assert.equal(anthropic.doStreamCalls[0]?.providerOptions, undefined);
  assert.throws(() => createAiSdkModelClient(byDefault, { useProviderStorage: "yes" as unknown as boolean }), /useProviderStorage "yes" is invalid: use true or false/);
});

void test("the client describes its model as provider and model ID, for the dev server's banner", () => {
  assert.equal(createAiSdkModelClient(scriptedModel(() => [], openaiIdentity)).description, "openai.responses gpt-test");
  assert.equal(createAiSdkModelClient("anthropic/claude-test").description, "anthropic/claude-test");
});

void test("a provider's retry-after becomes a RetryAfterError with the wait it asked for; other errors pass through unchanged", async () => {
  const failing = (headers: Record<string, string>): Promise<unknown> => {
    const error = new APICallError({ message: "Rate limited", url: "https://api.example.test/v1/responses", requestBodyValues: {}, statusCode: 429, responseHeaders: headers, isRetryable: true });
    const model = new MockLanguageModelV4({
      ...openaiIdentity,
      doStream: async () => {
        throw error;
      },
    });
    return createAiSdkModelClient(model).call(modelRequest([{ type: "user_text", text: "hello" }])).then(
      () => assert.fail("the call succeeded"),
      (thrown: unknown) => thrown,
    );
  };
  const inSeconds = await failing({ "Retry-After": "7" });
  const inMilliseconds = await failing({ "retry-after-ms": "1500", "retry-after": "2" });
  const asDate = await failing({ "retry-after": new Date(Date.now() + 30_000).toUTCString() });
  const without = await failing({ "content-type": "application/json" });

  assert.ok(RetryAfterError.isInstance(inSeconds));
  assert.equal(inSeconds.retryAfterMs, 7000);
  assert.match(inSeconds.message, /^Rate limited \(the provider asked to retry after 7000 ms\)$/);
  assert.ok(APICallError.isInstance(inSeconds.cause));
  assert.ok(RetryAfterError.isInstance(inMilliseconds));
  assert.equal(inMilliseconds.retryAfterMs, 1500);
  assert.ok(RetryAfterError.isInstance(asDate));
  assert.ok(asDate.retryAfterMs > 25_000 && asDate.retryAfterMs <= 30_000, `retryAfterMs ${asDate.retryAfterMs}`);
  assert.ok(APICallError.isInstance(without));
});

void test("the tracing provider name is the AI SDK provider ID without its API, with OpenTelemetry's well-known names", () => {
  assert.deepEqual(
    ["openai.responses", "openai.chat", "anthropic.messages", "google.generative-ai", "google.vertex.chat", "azure.responses", "amazon-bedrock", "mistral.chat", "xai.chat", "groq.chat", "perdure-test"].map(genAIProviderName),
    ["openai", "openai", "anthropic", "gcp.gemini", "gcp.vertex_ai", "azure.ai.openai", "aws.bedrock", "mistral_ai", "x_ai", "groq", "perdure-test"],
  );
});
