/** An OpenAI Agents SDK agent as its docs write one: `Agent`, `tool()` with zod, a model name. */
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { createOpenAiAgentsSessionFlow } from "@perdure/agents-openai-agents";
import { lookUpOrder, refundOrder } from "./order-effects.ts";

const agent = new Agent({
  name: "Order desk",
  instructions: "You help customers with their orders.",
  model: "gpt-5-mini",
  tools: [
    tool({
      name: "lookup_order",
      description: "Look up an order",
      parameters: z.object({ order_id: z.string() }),
      execute: async ({ order_id }) => lookUpOrder(order_id),
    }),
    tool({
      name: "refund_order",
      description: "Refund an order",
      parameters: z.object({ order_id: z.string() }),
      needsApproval: true,
      execute: async ({ order_id }) => refundOrder("openai-agents", order_id),
    }),
  ],
});

export const openAiAgentsAgent = createOpenAiAgentsSessionFlow(agent, "UserOpenAiAgentsAgent", {
  toolPolicies: { lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
