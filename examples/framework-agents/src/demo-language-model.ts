/**
 * The demo model of the AI SDK and Mastra order desks when no key is set:
 * the AI SDK's mock model following the order-desk script. Replace it with
 * your provider's model, such as `openai("gpt-5-mini")`.
 */
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { nextDemoStep } from "./order-desk.ts";

type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

/** A scripted model that names `agentName` in its greeting. */
export function demoLanguageModel(agentName: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "demo",
    modelId: "scripted-order-desk",
    doStream: async ({ prompt }) => {
      const lastUser = prompt.findLastIndex((message) => message.role === "user");
      const userMessage = prompt[lastUser];
      const userText = userMessage?.role === "user" ? userMessage.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "";
      const outputs = prompt.slice(lastUser + 1).flatMap((message) => message.role === "tool"
        ? message.content.flatMap((part) => (part.type === "tool-result" && part.output.type === "text" ? [part.output.value] : []))
        : []);
      const step = nextDemoStep(userText, outputs, agentName);
      const usage = { inputTokens: { total: 40, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 12, text: undefined, reasoning: undefined } };
      const parts: StreamPart[] = "text" in step
        ? [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: step.text }, { type: "text-end", id: "t" }, { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }]
        : [{ type: "tool-call", toolCallId: `call-${prompt.length}`, toolName: step.toolName, input: JSON.stringify(step.arguments) }, { type: "finish", finishReason: { unified: "tool-calls", raw: "tool-calls" }, usage }];
      return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
    },
  });
}
