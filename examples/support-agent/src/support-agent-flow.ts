import { ToolExecutionError } from "@perdure/agents";
import { createStepwiseAgentSessionFlow, functionTool, type ModelClient } from "@perdure/agents/stepwise";
import { findOrder, refundOrder } from "./orders.ts";

const orderIdParameters = {
  type: "object",
  properties: { order_id: { type: "string", description: "The order number, such as 1001." } },
  required: ["order_id"],
  additionalProperties: false,
};

/** A read: safe to retry, runs without approval. */
export const lookupOrderTool = functionTool<{ order_id: string }>({
  name: "lookup_order",
  description: "Look up an order by its ID: the item, its status and its amount.",
  parameters: orderIdParameters,
  effect: "read",
  execute: ({ order_id }) => {
    const order = findOrder(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    return { order_id: order.orderId, item: order.item, status: order.status, amount: `${(order.amountCents / 100).toFixed(2)} USD` };
  },
});

/** A write that must not run twice: it asks for approval and runs in a single attempt. */
export const refundOrderTool = functionTool<{ order_id: string }>({
  name: "refund_order",
  description: "Refund an order in full. Ask only when the customer wants a refund.",
  parameters: orderIdParameters,
  effect: "non_idempotent_write",
  execute: ({ order_id }, context) => refundOrder(order_id, context.idempotencyKey),
});

export const supportInstructions = [
  "You are the support agent of a small outdoor shop.",
  "Look orders up with lookup_order before you answer questions about them.",
  "Refund with refund_order only when the customer asks for a refund; say what was refunded.",
  "When you need a detail only the customer knows, such as the size for an exchange, ask with ask_user.",
  "When the customer asks you to check again later, wait with durable_wait, then look the order up again.",
].join(" ");

/**
 * The support agent's session Flow on a given model: two tools, the built-in
 * `ask_user`, `durable_wait` and `write_todos`, and plan mode, so a person
 * can review a plan before anything runs.
 */
export function createSupportAgentFlow(model: ModelClient) {
  return createStepwiseAgentSessionFlow(
    {
      name: "support",
      instructions: supportInstructions,
      model,
      tools: [lookupOrderTool, refundOrderTool],
      builtInTools: ["ask_user", "durable_wait", "write_todos"],
      planModeEnabled: true,
    },
    "SupportAgent",
  );
}
