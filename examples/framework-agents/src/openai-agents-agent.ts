/** The order desk as an OpenAI Agents SDK `Agent`, made durable by `@perdure/agents-openai-agents`. */
import { Agent, tool, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { createOpenAiAgentsSessionFlow, currentToolExecution } from "@perdure/agents-openai-agents";
import { notes, openAiNotesTools } from "./notes-tools.ts";
import { lookUpOrder, nextDemoStep, orderDeskInstructions, refundOrder } from "./order-desk.ts";

const orderParameters = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false } as never;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? "").join("") : "";
}

/** The demo model without a key: an SDK `Model` following the order-desk script. Use a model name such as "gpt-5-mini" instead. */
class DemoModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input: AgentInputItem[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
    const lastUser = input.findLastIndex((item) => "role" in item && item.role === "user");
    const since = input.slice(lastUser + 1) as { type?: string; output?: { text?: string } }[];
    const outputs = since.filter((item) => item.type === "function_call_result").map((item) => item.output?.text ?? "");
    const step = nextDemoStep(textOf((input[lastUser] as { content?: unknown } | undefined)?.content), outputs, "OpenAI Agents SDK");
    const usage = new Usage({ requests: 1, inputTokens: 40, outputTokens: 12, totalTokens: 52 });
    if ("text" in step) return { usage, output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: step.text }] }] };
    return { usage, output: [{ type: "function_call", callId: `call-${input.length}`, name: step.toolName, arguments: JSON.stringify(step.arguments), status: "completed" }] };
  }

  // eslint-disable-next-line require-yield -- the adapter uses non-streaming model calls
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the demo model does not stream");
  }
}

export const openAiOrderDesk = new Agent({
  name: "order-desk",
  instructions: orderDeskInstructions,
  model: new DemoModel(),
  tools: [
    tool({ name: "lookup_order", description: "Look up an order by its ID.", parameters: orderParameters, strict: false, errorFunction: null, execute: (input) => lookUpOrder((input as { order_id: string }).order_id) }),
    tool({
      name: "refund_order",
      description: "Refund an order. Only when the customer asks.",
      parameters: orderParameters,
      strict: false,
      errorFunction: null,
      needsApproval: true,
      execute: (input) => {
        const orderId = (input as { order_id: string }).order_id;
        return refundOrder(orderId, currentToolExecution()?.idempotencyKey ?? `local/${orderId}`);
      },
    }),
    ...openAiNotesTools(),
  ],
});

export const openAiOrderDeskFlow = createOpenAiAgentsSessionFlow(openAiOrderDesk, "OpenAiAgentsOrderDesk", {
  toolPolicies: { ...notes.toolPolicies(), lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
