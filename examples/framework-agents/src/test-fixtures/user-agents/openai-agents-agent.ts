/** An OpenAI Agents SDK agent as its docs write one: `Agent`, `tool()` with zod (the default errorFunction), a model name. */
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { createOpenAiAgentsSessionFlow } from "@perdure/agents-openai-agents";
import { cancelOrder, chargeOrder, checkStock, lookUpOrder, refundOrder, resetPassword } from "./order-effects.ts";

const orderInput = z.object({ order_id: z.string() });

const agent = new Agent({
  name: "Order desk",
  instructions: "You help customers with their orders.",
  model: "gpt-5-mini",
  tools: [
    tool({
      name: "lookup_order",
      description: "Look up an order",
      parameters: orderInput,
      execute: async ({ order_id }) => lookUpOrder(order_id),
    }),
    tool({
      name: "check_stock",
      description: "Check how many of an order's item are in stock",
      parameters: orderInput,
      execute: async ({ order_id }) => checkStock("openai-agents", order_id),
    }),
    tool({
      name: "refund_order",
      description: "Refund an order",
      parameters: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => refundOrder("openai-agents", order_id),
    }),
    tool({
      name: "cancel_order",
      description: "Cancel an order; the big account's orders need a person's approval",
      parameters: orderInput,
      needsApproval: async (_runContext, { order_id }) => order_id === "1001",
      execute: async ({ order_id }) => cancelOrder("openai-agents", order_id),
    }),
    tool({
      name: "reset_password",
      description: "Reset the password of an order's account",
      parameters: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => resetPassword("openai-agents", order_id),
    }),
    tool({
      name: "charge_order",
      description: "Charge an order",
      parameters: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => chargeOrder("openai-agents", order_id),
    }),
  ],
});

export const openAiAgentsAgent = createOpenAiAgentsSessionFlow(agent, "UserOpenAiAgentsAgent", {
  toolPolicies: {
    lookup_order: { effect: "read" },
    check_stock: { effect: "read" },
    refund_order: { effect: "non_idempotent_write" },
    cancel_order: { effect: "idempotent_write" },
    reset_password: { effect: "idempotent_write" },
    charge_order: { effect: "non_idempotent_write" },
  },
});
