/** Row 1: `allowedTools` pre-approving a non-idempotent write, as the Claude Agent SDK's docs pre-approve tools. */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
import { lookUpOrder, refundOrder } from "../order-effects.ts";

const lookupOrder = tool("lookup_order", "Look up an order", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: lookUpOrder(order_id) }] }));
const refundOrderTool = tool("refund_order", "Refund an order", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: await refundOrder("claude", order_id) }] }));

export const claudeAgent = createClaudeAgentSdkSessionFlow({ tools: [lookupOrder, refundOrderTool] }, "UserClaudeAllowedToolsAgent", {
  queryOptions: { model: "claude-sonnet-4-5", allowedTools: ["mcp__perdure__lookup_order", "mcp__perdure__refund_order"] },
  toolPolicies: { lookup_order: { effect: "read" }, refund_order: { effect: "non_idempotent_write" } },
});
