/** The order desk as a Vercel AI SDK `ToolLoopAgent`, made durable by `@perdure/agents-vercel-ai`. */
import { jsonSchema, tool, ToolLoopAgent } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { createVercelAiAgentSessionFlow, getAgentToolExecutionScope } from "@perdure/agents-vercel-ai";
import { aiSdkNotesTools, notes } from "./notes-tools.ts";
import { lookUpOrder, nextDemoStep, orderDeskInstructions, refundOrder } from "./order-desk.ts";

const orderInput = jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false });

type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;

/** The demo model without a key: the AI SDK's mock model, following the order-desk script. Put your provider's model here. */
const demoModel = new MockLanguageModelV4({
  provider: "demo",
  modelId: "scripted-order-desk",
  doStream: async ({ prompt }) => {
    const lastUser = prompt.findLastIndex((message) => message.role === "user");
    const userMessage = prompt[lastUser];
    const userText = userMessage?.role === "user" ? userMessage.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "";
    const outputs = prompt.slice(lastUser + 1).flatMap((message) => message.role === "tool"
      ? message.content.flatMap((part) => (part.type === "tool-result" && part.output.type === "text" ? [part.output.value] : []))
      : []);
    const step = nextDemoStep(userText, outputs, "AI SDK");
    const usage = { inputTokens: { total: 40, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 12, text: undefined, reasoning: undefined } };
    const parts: StreamPart[] = "text" in step
      ? [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: step.text }, { type: "text-end", id: "t" }, { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }]
      : [{ type: "tool-call", toolCallId: `call-${prompt.length}`, toolName: step.toolName, input: JSON.stringify(step.arguments) }, { type: "finish", finishReason: { unified: "tool-calls", raw: "tool-calls" }, usage }];
    return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) };
  },
});

export const vercelAiOrderDesk = new ToolLoopAgent({
  id: "order-desk",
  model: demoModel,
  instructions: orderDeskInstructions,
  tools: {
    lookup_order: tool({ description: "Look up an order by its ID.", inputSchema: orderInput, execute: ({ order_id }) => lookUpOrder(order_id) }),
    refund_order: tool({
      description: "Refund an order. Only when the customer asks.",
      inputSchema: orderInput,
      needsApproval: true,
      execute: ({ order_id }) => refundOrder(order_id, getAgentToolExecutionScope()?.idempotencyKey ?? `local/${order_id}`),
    }),
    ...aiSdkNotesTools(),
  },
});

export const vercelAiOrderDeskFlow = createVercelAiAgentSessionFlow(vercelAiOrderDesk, "VercelAiOrderDesk", {
  toolPolicies: { ...notes.toolPolicies(), lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
