/** The order desk as a Mastra `Agent`, made durable by `@perdure/agents-mastra`. */
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { createMastraAgentSessionFlow, idempotencyKeyRequestContextKey } from "@perdure/agents-mastra";
import { demoLanguageModel } from "./demo-language-model.ts";
import { mastraNotesTools, notes } from "./notes-tools.ts";
import { lookUpOrder, orderDeskInstructions, refundOrder } from "./order-desk.ts";

const orderInput = { type: "object" as const, properties: { order_id: { type: "string" as const } }, required: ["order_id"], additionalProperties: false };

// `<string>` (the id's type) spares TypeScript inferring all five of Agent's type parameters, which costs seconds of type checking per `new Agent`.
export const mastraOrderDesk = new Agent<string>({
  id: "order-desk",
  name: "order-desk",
  instructions: orderDeskInstructions,
  // The demo model without a key; Mastra 1.71's model type predates the mock's newest finish reason, hence the cast. Put your provider's model here, such as "openai/gpt-5-mini".
  model: demoLanguageModel("Mastra") as unknown as MastraModelConfig,
  tools: {
    lookup_order: createTool({
      id: "lookup_order",
      description: "Look up an order by its ID.",
      inputSchema: orderInput,
      execute: async (input) => lookUpOrder((input as { order_id: string }).order_id),
    }),
    refund_order: createTool({
      id: "refund_order",
      description: "Refund an order. Only when the customer asks.",
      inputSchema: orderInput,
      requireApproval: true,
      execute: async (input, { requestContext }) => {
        const orderId = (input as { order_id: string }).order_id;
        const key: unknown = requestContext?.get(idempotencyKeyRequestContextKey);
        return refundOrder(orderId, typeof key === "string" ? key : `local/${orderId}`);
      },
    }),
    ...mastraNotesTools(),
  },
});

export const mastraOrderDeskFlow = createMastraAgentSessionFlow(mastraOrderDesk, "MastraOrderDesk", {
  toolPolicies: { ...notes.toolPolicies(), lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
