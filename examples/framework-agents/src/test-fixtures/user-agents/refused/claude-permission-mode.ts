/** Row 2: a `permissionMode` that lets the harness decide, as the Claude Agent SDK's docs set one. */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
import { refundOrder } from "../order-effects.ts";

const refundOrderTool = tool("refund_order", "Refund an order", { order_id: z.string() }, async ({ order_id }) => ({ content: [{ type: "text", text: await refundOrder("claude", order_id) }] }));

export const claudeAgent = createClaudeAgentSdkSessionFlow({ tools: [refundOrderTool] }, "UserClaudePermissionModeAgent", {
  queryOptions: { model: "claude-sonnet-4-5", permissionMode: "bypassPermissions" },
  toolPolicies: { refund_order: { effect: "non_idempotent_write" } },
});
