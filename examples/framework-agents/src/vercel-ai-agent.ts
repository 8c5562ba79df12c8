/** The order desk as a Vercel AI SDK `ToolLoopAgent`, made durable by `@perdure/agents-vercel-ai`. */
import { jsonSchema, tool, ToolLoopAgent } from "ai";
import { createVercelAiAgentSessionFlow, currentToolExecution } from "@perdure/agents-vercel-ai";
import { aiSdkNotesTools, notes } from "./notes-tools.ts";
import { demoLanguageModel } from "./demo-language-model.ts";
import { lookUpOrder, orderDeskInstructions, refundOrder } from "./order-desk.ts";

const orderInput = jsonSchema<{ order_id: string }>({ type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"], additionalProperties: false });

export const vercelAiOrderDesk = new ToolLoopAgent({
  id: "order-desk",
  // The demo model without a key. Put your provider's model here.
  model: demoLanguageModel("AI SDK"),
  instructions: orderDeskInstructions,
  tools: {
    lookup_order: tool({ description: "Look up an order by its ID.", inputSchema: orderInput, execute: ({ order_id }) => lookUpOrder(order_id) }),
    refund_order: tool({
      description: "Refund an order. Only when the customer asks.",
      inputSchema: orderInput,
      needsApproval: true,
      execute: ({ order_id }) => refundOrder(order_id, currentToolExecution()?.idempotencyKey ?? `local/${order_id}`),
    }),
    ...aiSdkNotesTools(),
  },
});

export const vercelAiOrderDeskFlow = createVercelAiAgentSessionFlow(vercelAiOrderDesk, "VercelAiOrderDesk", {
  toolPolicies: { ...notes.toolPolicies(), lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
