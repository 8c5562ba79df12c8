/**
 * An AI SDK `MockLanguageModelV4` whose replies are computed from the prompt
 * it receives, as a real model's would be: deterministic, so a `RunModel`
 * rerun after a crash gets the same reply from the same committed state.
 * Helpers read the prompt (the turn's tool results, which model call of the
 * turn this is) and build the provider stream parts.
 */
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";

/** What `doStream` receives. */
export type LanguageModelCallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
/** The prompt the AI SDK sends the model: system, user, assistant and tool messages. */
export type LanguageModelPrompt = LanguageModelCallOptions["prompt"];
/** One part of the model's stream. */
export type LanguageModelStreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;
/** Provider metadata of a stream part, such as `{ anthropic: { signature } }`. */
export type ProviderMetadata = NonNullable<Extract<LanguageModelStreamPart, { type: "reasoning-end" }>["providerMetadata"]>;

/** A model's provider and model ID. */
export interface ModelIdentity {
  provider: string;
  modelId: string;
}

/** What the reply function learns about the prompt, besides the prompt itself. */
export interface PromptFacts {
  /** The text of the latest user message (a turn failure note counts: it is stored as user text). */
  lastUserText: string;
  /** How many user messages the prompt has: the turn's deterministic number. */
  userMessageCount: number;
  /** 1 for the first model call after the latest user message, 2 after one model output, and so on. */
  modelCallInTurn: number;
  /** The tool results since the latest user message, oldest first. */
  turnToolResults: { toolCallId: string; toolName: string; output: string }[];
  /** The names of the tools offered in this call, in order; empty when none. */
  toolNames: string[];
}

/** Computes the model's stream from its prompt. */
export type ScriptedReply = (facts: PromptFacts, options: LanguageModelCallOptions) => LanguageModelStreamPart[] | Promise<LanguageModelStreamPart[]>;

/**
 * A mock language model scripted from its prompt. Every call is kept in
 * `doStreamCalls`, as `MockLanguageModelV4` does; a reply that throws fails
 * the call as a provider error would.
 */
export function scriptedLanguageModel(identity: ModelIdentity, reply: ScriptedReply): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    ...identity,
    doStream: async (options) => {
      const parts = await reply(promptFacts(options), options);
      return { stream: convertArrayToReadableStream<LanguageModelStreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
    },
  });
}

export function promptFacts(options: LanguageModelCallOptions): PromptFacts {
  const { prompt } = options;
  const lastUserIndex = prompt.findLastIndex((message) => message.role === "user");
  const lastUser = prompt[lastUserIndex];
  const sinceUser = prompt.slice(lastUserIndex + 1);
  return {
    lastUserText: lastUser?.role === "user" ? lastUser.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "",
    userMessageCount: prompt.filter((message) => message.role === "user").length,
    modelCallInTurn: sinceUser.filter((message) => message.role === "assistant").length + 1,
    turnToolResults: sinceUser.flatMap((message) =>
      message.role !== "tool"
        ? []
        : message.content.flatMap((part) =>
            part.type === "tool-result" ? [{ toolCallId: part.toolCallId, toolName: part.toolName, output: part.output.type === "text" ? part.output.value : JSON.stringify(part.output) }] : [],
          ),
    ),
    toolNames: (options.tools ?? []).map((tool) => tool.name),
  };
}

/** A deterministic tool call ID: the turn (by user messages), the model call of the turn, the position. */
export function scriptedToolCallId(facts: Pick<PromptFacts, "userMessageCount" | "modelCallInTurn">, index: number): string {
  return `call-u${facts.userMessageCount}-m${facts.modelCallInTurn}-${index}`;
}

export function textParts(id: string, deltas: readonly string[]): LanguageModelStreamPart[] {
  return [{ type: "text-start", id }, ...deltas.map((delta): LanguageModelStreamPart => ({ type: "text-delta", id, delta })), { type: "text-end", id }];
}

export function reasoningParts(id: string, deltas: readonly string[], providerMetadata: ProviderMetadata): LanguageModelStreamPart[] {
  return [
    { type: "reasoning-start", id },
    ...deltas.map((delta): LanguageModelStreamPart => ({ type: "reasoning-delta", id, delta })),
    { type: "reasoning-end", id, providerMetadata },
  ];
}

/** A complete tool call; `input` is the model's argument text, JSON or not. */
export function toolCallPart(toolCallId: string, toolName: string, input: string, providerMetadata?: ProviderMetadata): LanguageModelStreamPart {
  return { type: "tool-call", toolCallId, toolName, input, ...(providerMetadata === undefined ? {} : { providerMetadata }) };
}

export function finishPart(unified: "stop" | "tool-calls", tokens: { input?: number; output?: number; reasoning?: number } = {}): LanguageModelStreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: {
      inputTokens: { total: tokens.input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: tokens.output, text: undefined, reasoning: tokens.reasoning },
    },
  };
}

/** The prompt as JSON data, so an absent property and one set to `undefined` compare equal. */
export function promptAsJson(prompt: LanguageModelPrompt | undefined): unknown[] {
  return JSON.parse(JSON.stringify(prompt ?? null)) as unknown[];
}
