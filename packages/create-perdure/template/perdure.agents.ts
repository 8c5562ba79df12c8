/**
 * Your agents. `perdure dev` (npm start) hosts every agent session Flow this
 * module exports: a Worker runs them, and the web UI at
 * http://127.0.0.1:4100 talks to them. `model.ts` picks the model.
 */
import { ToolExecutionError } from "@perdure/agents";
import { createStepwiseAgentSessionFlow, functionTool, type ModelClient } from "@perdure/agents/stepwise";
import { z } from "zod";
import { chooseModel } from "./model.ts";

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

/** The tools' arguments: `execute` gets them typed, and the model is offered the JSON Schema zod generates. */
const orderArguments = z.object({ order_id: z.string().describe("The order number, such as 1001.") });

/** A read: retried safely, runs without approval. */
export const lookupOrder = functionTool({
  name: "lookup_order",
  description: "Look up an order by its ID.",
  parameters: orderArguments,
  effect: "read",
  execute: ({ order_id }) => {
    const order = orders.get(order_id);
    if (order === undefined) throw new ToolExecutionError(`order ${order_id} does not exist`);
    return { order_id, ...order };
  },
});

/** A write that must not run twice: it waits for a person's approval and runs in a single attempt. */
export const refundOrder = functionTool({
  name: "refund_order",
  description: "Refund an order in full, when the customer asks for a refund.",
  parameters: orderArguments,
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

/** The support agent on a given model; the tests give it the demo model. */
export function createSupportAgent(model: ModelClient) {
  return createStepwiseAgentSessionFlow(
    { name: "support", instructions: "You help customers with their orders.", model, tools: [lookupOrder, refundOrder] },
    "SupportAgent",
  );
}

export const supportAgent = createSupportAgent(chooseModel());
