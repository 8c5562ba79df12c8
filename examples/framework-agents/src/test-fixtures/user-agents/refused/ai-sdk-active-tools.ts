/** Row 9: `activeTools`, as the AI SDK's docs limit the tools a model may call. */
import { openai } from "@ai-sdk/openai";
import { tool, ToolLoopAgent } from "ai";
import { z } from "zod";
import { createVercelAiAgentSessionFlow } from "@perdure/agents-vercel-ai";
import { lookUpOrder, refundOrder } from "../order-effects.ts";

const agent = new ToolLoopAgent({
  model: openai("gpt-5-mini"),
  instructions: "You help customers with their orders.",
  tools: {
    lookup_order: tool({ description: "Look up an order", inputSchema: z.object({ order_id: z.string() }), execute: async ({ order_id }) => lookUpOrder(order_id) }),
    refund_order: tool({ description: "Refund an order", inputSchema: z.object({ order_id: z.string() }), execute: async ({ order_id }) => refundOrder("ai-sdk", order_id) }),
  },
  activeTools: ["lookup_order"],
});

export const aiSdkAgent = createVercelAiAgentSessionFlow(agent, "UserAiSdkActiveToolsAgent");
