/** Row 2: the user's own `canUseTool`, as the Claude Agent SDK's permission docs write one. */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
import { refundOrder } from "../order-effects.ts";

const refundOrderTool = tool("refund_order", "Refund an order", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: await refundOrder("claude", order_id) }] }));

export const claudeAgent = createClaudeAgentSdkSessionFlow({ tools: [refundOrderTool] }, "UserClaudeCanUseToolAgent", {
  queryOptions: {
    model: "claude-sonnet-4-5",
    canUseTool: async (toolName, input) => (toolName.endsWith("refund_order") ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: "not allowed" }),
  },
  toolPolicies: { refund_order: { effect: "non_idempotent_write" } },
});
