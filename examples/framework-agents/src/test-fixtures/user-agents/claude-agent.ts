/** A Claude Agent SDK agent as its docs write one: SDK MCP tools from `tool()` with a zod shape. */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
import { lookUpOrder, refundOrder } from "./order-effects.ts";

const lookupOrder = tool("lookup_order", "Look up an order", { order_id: z.string() }, async ({ order_id }) => ({
  content: [{ type: "text", text: lookUpOrder(order_id) }],
}), { annotations: { readOnlyHint: true } });

const refundOrderTool = tool("refund_order", "Refund an order", { order_id: z.string() }, async ({ order_id }) => ({
  content: [{ type: "text", text: await refundOrder("claude", order_id) }],
}));

export const claudeAgent = createClaudeAgentSdkSessionFlow({
  systemPrompt: "You help customers with their orders.",
  tools: [lookupOrder, refundOrderTool],
  needsApproval: { refund_order: true },
}, "UserClaudeAgent", {
  queryOptions: { model: "claude-sonnet-4-5" },
  toolPolicies: { refund_order: { effect: "non_idempotent_write" } },
});
