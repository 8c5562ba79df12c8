/**
 * The conformance tests' neutral model as an AI SDK `MockLanguageModelV4`:
 * it reads the latest user text and the turn's tool results from the prompt
 * the AI SDK sends, asks the neutral script, and streams the reply as a
 * provider would.
 */
import type { ConformanceModel } from "@perdure/agents/testing";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";

type CallOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

function readPrompt(options: CallOptions): { lastUserText: string; userMessages: number; modelCallInTurn: number; turnToolResults: { toolName: string; output: string }[] } {
  const { prompt } = options;
  const lastUserIndex = prompt.findLastIndex((message) => message.role === "user");
  const lastUser = prompt[lastUserIndex];
  const sinceUser = prompt.slice(lastUserIndex + 1);
  return {
    lastUserText: lastUser?.role === "user" ? lastUser.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "",
    userMessages: prompt.filter((message) => message.role === "user").length,
    modelCallInTurn: sinceUser.filter((message) => message.role === "assistant").length + 1,
    turnToolResults: sinceUser.flatMap((message) => message.role !== "tool" ? [] : message.content.flatMap((part) =>
      part.type === "tool-result" ? [{ toolName: part.toolName, output: part.output.type === "text" ? part.output.value : JSON.stringify(part.output) }] : [])),
  };
}

function finish(unified: "stop" | "tool-calls"): StreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: { inputTokens: { total: 20, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: undefined, reasoning: undefined } },
  };
}

/** A mock model that answers from `model`, the neutral conformance script. */
export function conformanceLanguageModel(model: ConformanceModel): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "conformance.mock",
    modelId: "conformance-model",
    doStream: async (options) => {
      const facts = readPrompt(options);
      const reply = await model.reply({ lastUserText: facts.lastUserText, turnToolResults: facts.turnToolResults, ...(options.abortSignal === undefined ? {} : { signal: options.abortSignal }) });
      const parts: StreamPart[] = reply.kind === "text"
        ? [{ type: "text-start", id: "answer" }, { type: "text-delta", id: "answer", delta: reply.text }, { type: "text-end", id: "answer" }, finish("stop")]
        : [
          { type: "tool-call", toolCallId: `call-u${facts.userMessages}-m${facts.modelCallInTurn}`, toolName: reply.toolName, input: JSON.stringify(reply.arguments) },
          finish("tool-calls"),
        ];
      return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
    },
  });
}
