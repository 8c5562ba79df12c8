/**
 * Your agents. `perdure dev` (npm start) hosts every agent session Flow this
 * module exports: a Worker runs them, and the web UI at
 * http://127.0.0.1:4100 talks to them.
 *
 * The agent runs on a scripted demo model, so it works without a key. To
 * use a real model, install the AI SDK and a provider
 * (`npm install ai @ai-sdk/openai`) and replace `model` with
 * `createAiSdkModelClient(openai("gpt-5-mini"))` from "@perdure/agents/ai-sdk".
 */
import { ToolExecutionError } from "@perdure/agents";
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";

interface Order {
  item: string;
  status: "processing" | "shipped" | "refunded";
}

const orders = new Map<string, Order>([
  ["1001", { item: "Trail running shoes", status: "shipped" }],
  ["1002", { item: "Rain jacket", status: "processing" }],
]);
/** Refunds already made, by idempotency key: a retried call finds its own. */
const refunds = new Map<string, string>();

const orderId = {
  type: "object",
  properties: { order_id: { type: "string", description: "The order number, such as 1001." } },
  required: ["order_id"],
  additionalProperties: false,
};

/** A read: retried safely, runs without approval. */
export const lookupOrder = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID.",
  parameters: orderId,
  effect: "read",
  execute: ({ order_id }) => {
    const order = orders.get(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    return { order_id, ...order };
  },
});

/** A write that must not run twice: it waits for a person's approval and runs in a single attempt. */
export const refundOrder = functionTool<{ order_id: string }>({
  name: "refund_order",
  description: "Refund an order in full, when the customer asks for a refund.",
  parameters: orderId,
  effect: "non_idempotent_write",
  execute: ({ order_id }, context) => {
    const done = refunds.get(context.idempotencyKey);
    if (done !== undefined) return done;
    const order = orders.get(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    order.status = "refunded";
    const receipt = `refunded order ${order_id} (${order.item})`;
    refunds.set(context.idempotencyKey, receipt);
    return receipt;
  },
});

/** The demo model: looks orders up, asks to refund them, and reports what the tools returned. */
function demoReply(request: ModelRequest): ScriptedModelReply {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: results.map((result) => result.output).join(" ") };
  const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const id = /\b(\d{4})\b/.exec(text)?.[1];
  if (id !== undefined && /refund/i.test(text)) return { text: `I can refund order ${id} once you approve it.`, toolCalls: [{ name: "refund_order", arguments: { order_id: id } }] };
  if (id !== undefined) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: id } }] };
  return { text: "Hello! Ask where order 1001 is, or ask me to refund order 1002." };
}

export const model = new ScriptedModelClient(demoReply, { provider: "demo", description: "the scripted demo model" });

export const supportAgent = createStepwiseAgentSessionFlow(
  { name: "support", instructions: "You help customers with their orders.", model, tools: [lookupOrder, refundOrder] },
  "SupportAgent",
);
