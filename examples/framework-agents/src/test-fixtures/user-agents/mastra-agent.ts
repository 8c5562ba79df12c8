/** A Mastra agent as Mastra's docs write one: `Agent`, `createTool()` with zod, an AI SDK provider model. */
import { openai } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";
import { lookUpOrder, refundOrder } from "./order-effects.ts";

const lookupOrder = createTool({
  id: "lookup_order",
  description: "Look up an order",
  inputSchema: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => lookUpOrder(order_id),
});

const refundOrderTool = createTool({
  id: "refund_order",
  description: "Refund an order",
  inputSchema: z.object({ order_id: z.string() }),
  requireApproval: true,
  execute: async ({ order_id }) => refundOrder("mastra", order_id),
});

const agent = new Agent({
  id: "order-desk",
  name: "Order desk",
  instructions: "You help customers with their orders.",
  // Mastra 1.71's model type predates @ai-sdk/openai 4's newest model interface, hence the cast.
  model: openai("gpt-5-mini") as unknown as MastraModelConfig,
  tools: { lookup_order: lookupOrder, refund_order: refundOrderTool },
});

export const mastraAgent = createMastraAgentSessionFlow(agent, "UserMastraAgent", {
  toolPolicies: { lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
