/** Row 9: a Mastra supervisor with a sub-agent, as Mastra's docs build agent networks. */
import { openai } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import { createMastraAgentSessionFlow } from "@perdure/agents-mastra";
import { lookUpOrder } from "../order-effects.ts";

// Mastra 1.71's model type predates @ai-sdk/openai 4's newest model interface, hence the cast.
const model = openai("gpt-5-mini") as unknown as MastraModelConfig;

const billingAgent = new Agent<string>({
  id: "billing",
  name: "Billing",
  description: "Answers billing questions",
  instructions: "You answer billing questions.",
  model,
});

const supervisor = new Agent<string>({
  id: "order-desk-supervisor",
  name: "Order desk supervisor",
  instructions: "You route customers to the right agent.",
  model,
  tools: {
    lookup_order: createTool({ id: "lookup_order", description: "Look up an order", inputSchema: z.object({ order_id: z.string() }), execute: async ({ order_id }) => lookUpOrder(order_id) }),
  },
  agents: { billing: billingAgent },
});

export const mastraAgent = createMastraAgentSessionFlow(supervisor, "UserMastraSupervisorAgent", {
  toolPolicies: { lookup_order: { effect: "read" } },
});
