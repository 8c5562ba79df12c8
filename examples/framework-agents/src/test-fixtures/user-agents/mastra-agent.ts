/** A Mastra agent as Mastra's docs write one: `Agent`, `createTool()` with zod, an AI SDK provider model. */
import { openai } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";
import { cancelOrder, chargeOrder, lookUpOrder, refundOrder, resetPassword } from "./order-effects.ts";

const orderInput = z.object({ order_id: z.string() });

const lookupOrder = createTool({
  id: "lookup_order",
  description: "Look up an order",
  inputSchema: orderInput,
  execute: async ({ order_id }) => lookUpOrder(order_id),
});

const refundOrderTool = createTool({
  id: "refund_order",
  description: "Refund an order",
  inputSchema: orderInput,
  requireApproval: true,
  execute: async ({ order_id }) => refundOrder("mastra", order_id),
});

const cancelOrderTool = createTool({
  id: "cancel_order",
  description: "Cancel an order; the big account's orders need a person's approval",
  inputSchema: orderInput,
  requireApproval: async ({ order_id }) => order_id === "1001",
  execute: async ({ order_id }) => cancelOrder("mastra", order_id),
});

const resetPasswordTool = createTool({
  id: "reset_password",
  description: "Reset the password of an order's account",
  inputSchema: orderInput,
  requireApproval: true,
  execute: async ({ order_id }) => resetPassword("mastra", order_id),
});

const chargeOrderTool = createTool({
  id: "charge_order",
  description: "Charge an order",
  inputSchema: orderInput,
  requireApproval: true,
  execute: async ({ order_id }) => chargeOrder("mastra", order_id),
});

const agent = new Agent<string>({
  id: "order-desk",
  name: "Order desk",
  instructions: "You help customers with their orders.",
  // Mastra 1.71's model type predates @ai-sdk/openai 4's newest model interface, hence the cast.
  model: openai("gpt-5-mini") as unknown as MastraModelConfig,
  tools: { lookup_order: lookupOrder, refund_order: refundOrderTool, cancel_order: cancelOrderTool, reset_password: resetPasswordTool, charge_order: chargeOrderTool },
});

export const mastraAgent = createMastraAgentSessionFlow(agent, "UserMastraAgent", {
  toolPolicies: {
    lookup_order: { effect: "read" },
    refund_order: { effect: "non_idempotent_write" },
    cancel_order: { effect: "idempotent_write" },
    reset_password: { effect: "idempotent_write" },
    charge_order: { effect: "non_idempotent_write" },
  },
});
