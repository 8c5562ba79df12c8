/**
 * The conformance tests' neutral model as the AI SDK's `MockLanguageModelV4`,
 * the model a Mastra agent calls: it reads the prompt Mastra builds (the
 * latest user text, the tool results after it), asks the script, and
 * streams the reply as a provider would.
 */
import type { MastraModelConfig } from "@mastra/core/llm";
import type { ConformanceModel } from "@perdure/agents/testing";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";

type StreamOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type Prompt = StreamOptions["prompt"];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

/** What the script reads from a prompt. */
export interface PromptFacts {
  lastUserText: string;
  turnToolResults: { toolName: string; output: string }[];
  /** User messages in the prompt, for stable tool call IDs. */
  userMessageCount: number;
  /** Model messages after the latest user message, plus one. */
  modelCallInTurn: number;
}

/** Reads the facts of a prompt. */
export function readPrompt(prompt: Prompt): PromptFacts {
  const lastUserIndex = prompt.findLastIndex((message) => message.role === "user");
  const lastUser = prompt[lastUserIndex];
  const afterUser = prompt.slice(lastUserIndex + 1);
  const turnToolResults = afterUser.flatMap((message) => message.role !== "tool" ? [] : message.content.flatMap((part) =>
    part.type === "tool-result" ? [{ toolName: part.toolName, output: part.output.type === "text" ? part.output.value : JSON.stringify(part.output) }] : []));
  return {
    lastUserText: lastUser?.role === "user" ? lastUser.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "",
    turnToolResults,
    userMessageCount: prompt.filter((message) => message.role === "user").length,
    modelCallInTurn: afterUser.filter((message) => message.role === "assistant").length + 1,
  };
}

const usage = {
  inputTokens: { total: 20, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: undefined, reasoning: undefined },
};

/** The stream parts of a text answer. */
export function textParts(text: string): StreamPart[] {
  return [
    { type: "text-start", id: "answer" },
    { type: "text-delta", id: "answer", delta: text },
    { type: "text-end", id: "answer" },
    { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
  ];
}

/** The stream parts of one tool call. */
export function toolCallParts(toolCallId: string, toolName: string, input: unknown): StreamPart[] {
  return [
    { type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool-calls" }, usage },
  ];
}

/**
 * The mock model as the type Mastra takes. Mastra 1.71 bundles the types of
 * `@ai-sdk/provider` 4.0.17, whose finish reasons lack the later
 * `"interrupted"`, so a model of `ai` 7.0.173 needs this cast; at run time
 * Mastra calls it as any LanguageModelV4.
 */
export function asMastraModel(model: MockLanguageModelV4): MastraModelConfig {
  return model as unknown as MastraModelConfig;
}

/** A mock model whose every reply comes from `reply`. */
export function scriptedLanguageModel(reply: (facts: PromptFacts, signal: AbortSignal | undefined) => Promise<StreamPart[]>): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "perdure.scripted",
    modelId: "scripted-model",
    doStream: async (options) => {
      const parts = await reply(readPrompt(options.prompt), options.abortSignal);
      return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
    },
  });
}

/** The neutral conformance model as a mock model. */
export function conformanceLanguageModel(model: ConformanceModel): MockLanguageModelV4 {
  return scriptedLanguageModel(async (facts, signal) => {
    const reply = await model.reply({ lastUserText: facts.lastUserText, turnToolResults: facts.turnToolResults, ...(signal === undefined ? {} : { signal }) });
    return reply.kind === "text" ? textParts(reply.text) : toolCallParts(`call-u${facts.userMessageCount}-m${facts.modelCallInTurn}`, reply.toolName, reply.arguments);
  });
}
