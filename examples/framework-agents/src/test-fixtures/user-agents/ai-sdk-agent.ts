/** An AI SDK agent as the AI SDK's docs write one: `ToolLoopAgent`, `tool()` with zod, the OpenAI provider, a step limit. */
import { openai } from "@ai-sdk/openai";
import { stepCountIs, tool, ToolLoopAgent } from "ai";
import { z } from "zod";
import { createVercelAiAgentSessionFlow } from "@perdure/agents-vercel-ai";
import { cancelOrder, chargeOrder, lookUpOrder, refundOrder, resetPassword } from "./order-effects.ts";

const orderInput = z.object({ order_id: z.string() });

const agent = new ToolLoopAgent({
  model: openai("gpt-5-mini"),
  instructions: "You help customers with their orders.",
  // The session's own loop ends a turn at the model's answer: perdure dev warns that this does not apply.
  stopWhen: stepCountIs(5),
  tools: {
    lookup_order: tool({
      description: "Look up an order",
      inputSchema: orderInput,
      execute: async ({ order_id }) => lookUpOrder(order_id),
    }),
    refund_order: tool({
      description: "Refund an order",
      inputSchema: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => refundOrder("ai-sdk", order_id),
    }),
    cancel_order: tool({
      description: "Cancel an order; the big account's orders need a person's approval",
      inputSchema: orderInput,
      needsApproval: async ({ order_id }) => order_id === "1001",
      execute: async ({ order_id }) => cancelOrder("ai-sdk", order_id),
    }),
    reset_password: tool({
      description: "Reset the password of an order's account",
      inputSchema: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => resetPassword("ai-sdk", order_id),
    }),
    charge_order: tool({
      description: "Charge an order",
      inputSchema: orderInput,
      needsApproval: true,
      execute: async ({ order_id }) => chargeOrder("ai-sdk", order_id),
    }),
  },
});

export const aiSdkAgent = createVercelAiAgentSessionFlow(agent, "UserAiSdkAgent", {
  toolPolicies: {
    lookup_order: { effect: "read" },
    refund_order: { effect: "non_idempotent_write" },
    cancel_order: { effect: "idempotent_write" },
    reset_password: { effect: "idempotent_write" },
    charge_order: { effect: "non_idempotent_write" },
  },
});
