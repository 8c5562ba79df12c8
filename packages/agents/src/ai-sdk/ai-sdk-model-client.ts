/**
 * `createAiSdkModelClient`: a Stepwise `ModelClient` on any Vercel AI SDK
 * `LanguageModel`, through one `streamText` step per model call.
 */
import { gateway, jsonSchema, stepCountIs, streamText, tool, type JSONSchema7, type LanguageModel, type LanguageModelCallOptions, type TextStreamPart, type ToolSet } from "ai";
import { InvalidInputError } from "@perdure/engine";
import type { ModelClient, ModelRequest, ModelResponse, ModelSettings, ModelToolDefinition } from "../stepwise/model-client.ts";
import { toAiSdkMessages } from "./ai-sdk-input-messages.ts";
import { modelCallMetadataOf, storedAssistantItem, toAgentUsage, toModelToolCalls } from "./ai-sdk-model-response.ts";
import { withProviderRetryAfter } from "./ai-sdk-retry-after.ts";

/** Provider options by provider name, such as `{ openai: { reasoningSummary: "auto" } }`. */
export type AiSdkProviderOptions = NonNullable<ModelSettings["providerOptions"]>;

/** Options of {@link createAiSdkModelClient}. */
export interface AiSdkModelClientOptions {
  /**
   * Provider options sent with every call. The agent's
   * `modelSettings.providerOptions` are merged over them, one provider name
   * at a time, so a setting of the agent wins.
   *
   * @default {}
   */
  providerOptions?: AiSdkProviderOptions;
  /**
   * Lets the provider keep the conversation on its side. By default the
   * client sends self-contained history: for the OpenAI Responses API it
   * sends `store: false`, so the AI SDK includes each reasoning item's
   * encrypted content and replays it inline instead of referring to items
   * the provider stored (`item_reference`), which a provider may expire or
   * never keep. `true` leaves the provider's own default (`store: true` for
   * OpenAI). A `store` in `providerOptions` or the agent's `modelSettings`
   * wins over either.
   *
   * @default false
   */
  useProviderStorage?: boolean;
}

interface ResolvedAiSdkModelClientOptions {
  providerOptions: AiSdkProviderOptions;
  useProviderStorage: boolean;
}

/**
 * The `api` stored with every model output of this client. An output is
 * replayed unchanged only to a client with the same `provider` and `api`.
 */
export const aiSdkModelClientApi = "ai-sdk";

/**
 * Makes a `ModelClient` that calls an AI SDK model once per `RunModel`.
 *
 * Each call is one `streamText` step: `stopWhen: stepCountIs(1)`,
 * `maxRetries: 0`, and the tools as definitions without `execute`, so the AI
 * SDK makes exactly one model request and runs no tool, no tool loop and no
 * retry; a retry is a new `RunModel` attempt. Text and reasoning deltas
 * stream to `AgentEvents` as they arrive.
 *
 * The response is stored as the AI SDK assistant message, with every part's
 * `providerOptions` (thinking signatures, encrypted reasoning) as the AI SDK
 * returned them. A model whose `provider` equals the stored one gets that
 * message back unchanged; any other model gets only its text and tool calls,
 * so a session can change model between turns. A string model ID resolves
 * through `globalThis.AI_SDK_DEFAULT_PROVIDER`, or the AI Gateway, as in
 * `streamText`, and its provider is that model's `provider`.
 *
 * `modelSettings` pass through: `temperature`, `maxOutputTokens`,
 * `providerOptions`, and `reasoningEffort` as the AI SDK's `reasoning`
 * call option, which each provider maps to its own effort or token budget.
 *
 * History is self-contained by default (see `useProviderStorage`), so a
 * session never depends on what a provider kept. A failed call whose
 * response names a wait (`retry-after-ms`, `retry-after`) throws a
 * `RetryAfterError`, so the next attempt waits at least that long within
 * `RunModel`'s retry policy.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * import { createAiSdkModelClient } from "@perdure/agents/ai-sdk";
 *
 * const model = createAiSdkModelClient(openai("gpt-5-mini"), {
 *   providerOptions: { openai: { reasoningSummary: "auto" } },
 * });
 */
export function createAiSdkModelClient(model: LanguageModel, options: AiSdkModelClientOptions = {}): ModelClient {
  const resolvedOptions = resolveAiSdkModelClientOptions(options);
  return {
    call: (request) => callModel(model, resolvedOptions, request),
    description: typeof model === "string" ? model : `${model.provider} ${model.modelId}`,
  };
}

function resolveAiSdkModelClientOptions(options: AiSdkModelClientOptions): ResolvedAiSdkModelClientOptions {
  const providerOptions = options.providerOptions ?? {};
  if (!isPlainObject(providerOptions) || !Object.values(providerOptions).every(isPlainObject)) {
    throw new InvalidInputError(
      `createAiSdkModelClient providerOptions ${JSON.stringify(providerOptions)} is invalid: use an object of options objects by provider name, such as { openai: { reasoningSummary: "auto" } }`,
    );
  }
  if (options.useProviderStorage !== undefined && typeof options.useProviderStorage !== "boolean") {
    throw new InvalidInputError(`createAiSdkModelClient useProviderStorage ${JSON.stringify(options.useProviderStorage)} is invalid: use true or false`);
  }
  return { providerOptions, useProviderStorage: options.useProviderStorage ?? false };
}

/**
 * What makes history self-contained for this provider: `store: false` for
 * the OpenAI Responses API (also through Azure), nothing for providers that
 * keep nothing between calls.
 */
function selfContainedHistoryOptions(provider: string): AiSdkProviderOptions {
  if (!provider.endsWith(".responses")) return {};
  return { [provider.includes("azure") ? "azure" : "openai"]: { store: false } };
}

async function callModel(model: LanguageModel, options: ResolvedAiSdkModelClientOptions, request: ModelRequest): Promise<ModelResponse> {
  const languageModel = resolveLanguageModel(model);
  const provider = languageModel.provider;
  const settings = request.modelSettings ?? {};
  const storageOptions = options.useProviderStorage ? {} : selfContainedHistoryOptions(provider);
  const providerOptions = mergeProviderOptions(mergeProviderOptions(storageOptions, options.providerOptions), settings.providerOptions ?? {});
  const result = streamText({
    model: languageModel,
    ...(request.instructions === "" ? {} : { instructions: request.instructions }),
    messages: toAiSdkMessages(request.input, { provider, api: aiSdkModelClientApi }),
    ...(request.tools.length === 0 ? {} : { tools: toolDefinitions(request.tools), toolOrder: request.tools.map((definition) => definition.name) }),
    ...(request.tools.length === 0 || request.toolChoice !== "required" ? {} : { toolChoice: "required" as const }),
    stopWhen: stepCountIs(1),
    maxRetries: 0,
    abortSignal: request.signal,
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
    // The AI SDK's own setting; each provider maps it to its effort or budget and warns when it must round.
    ...(settings.reasoningEffort === undefined ? {} : { reasoning: settings.reasoningEffort as LanguageModelCallOptions["reasoning"] }),
    ...(Object.keys(providerOptions).length === 0 ? {} : { providerOptions: providerOptions as NonNullable<Parameters<typeof streamText>[0]["providerOptions"]> }),
    // The error is rethrown below and fails the RunModel attempt, which reports it; the default handler would log it a second time.
    onError: () => {},
  });
  try {
    await streamParts(result.fullStream, request);
  } catch (error) {
    throw withProviderRetryAfter(error);
  }
  request.signal.throwIfAborted();
  const step = await result.finalStep;
  return {
    text: step.text,
    toolCalls: toModelToolCalls(step.toolCalls),
    usage: toAgentUsage(step.usage),
    provider,
    api: aiSdkModelClientApi,
    item: storedAssistantItem(step.response.messages),
    metadata: modelCallMetadataOf(step, languageModel.modelId),
  };
}

/** Streams text and reasoning deltas to the session's events; throws the call's error. */
async function streamParts(parts: AsyncIterable<TextStreamPart<ToolSet>>, request: ModelRequest): Promise<void> {
  for await (const part of parts) {
    switch (part.type) {
      case "text-delta":
        if (part.text !== "") await request.events.textDelta(part.text);
        break;
      case "reasoning-delta":
        if (part.text !== "") await request.events.reasoningDelta(part.text);
        break;
      case "error":
        throw part.error;
      case "abort":
        throw abortReasonOf(request.signal);
      default:
        break;
    }
  }
}

/** The model object `streamText` would use: a string ID goes through the default provider. */
function resolveLanguageModel(model: LanguageModel): Exclude<LanguageModel, string> {
  if (typeof model !== "string") return model;
  return (globalThis.AI_SDK_DEFAULT_PROVIDER ?? gateway).languageModel(model);
}

/** Definitions only: without `execute`, the AI SDK returns the calls instead of running them. */
function toolDefinitions(definitions: readonly ModelToolDefinition[]): ToolSet {
  const tools: ToolSet = {};
  for (const definition of definitions) {
    tools[definition.name] = tool({ description: definition.description, inputSchema: jsonSchema(definition.parameters as JSONSchema7) });
  }
  return tools;
}

function mergeProviderOptions(defaults: AiSdkProviderOptions, overrides: AiSdkProviderOptions): AiSdkProviderOptions {
  const merged: AiSdkProviderOptions = { ...defaults };
  for (const [providerName, providerSettings] of Object.entries(overrides)) {
    merged[providerName] = { ...defaults[providerName], ...providerSettings };
  }
  return merged;
}

function abortReasonOf(signal: AbortSignal): unknown {
  return signal.aborted ? signal.reason : new DOMException("The model call was aborted.", "AbortError");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
