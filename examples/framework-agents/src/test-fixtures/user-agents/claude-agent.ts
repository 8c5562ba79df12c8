/** A Claude Agent SDK agent as its docs write one: SDK MCP tools from `tool()` with a zod shape. */
import { tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { createClaudeAgentSdkSessionFlow } from "@perdure/agents-claude-agent-sdk";
import { cancelOrder, chargeOrder, lookUpOrder, refundOrder, resetPassword } from "./order-effects.ts";

const orderShape = { order_id: z.string() };
const text = (value: string): { content: { type: "text"; text: string }[] } => ({ content: [{ type: "text", text: value }] });

const lookupOrder = tool("lookup_order", "Look up an order", orderShape, async ({ order_id }) => text(lookUpOrder(order_id)), { annotations: { readOnlyHint: true } });
const refundOrderTool = tool("refund_order", "Refund an order", orderShape, async ({ order_id }) => text(await refundOrder("claude", order_id)));
const cancelOrderTool = tool("cancel_order", "Cancel an order; the big account's orders need a person's approval", orderShape, async ({ order_id }) => text(cancelOrder("claude", order_id)));
const resetPasswordTool = tool("reset_password", "Reset the password of an order's account", orderShape, async ({ order_id }) => text(resetPassword("claude", order_id)));
const chargeOrderTool = tool("charge_order", "Charge an order", orderShape, async ({ order_id }) => text(chargeOrder("claude", order_id)));

export const claudeAgent = createClaudeAgentSdkSessionFlow({
  systemPrompt: "You help customers with their orders.",
  tools: [lookupOrder, refundOrderTool, cancelOrderTool, resetPasswordTool, chargeOrderTool],
  needsApproval: {
    refund_order: true,
    cancel_order: (input) => input.order_id === "1001",
    reset_password: true,
    charge_order: true,
  },
}, "UserClaudeAgent", {
  queryOptions: { model: "claude-sonnet-4-5" },
  toolPolicies: {
    refund_order: { effect: "non_idempotent_write" },
    cancel_order: { effect: "idempotent_write" },
    reset_password: { effect: "idempotent_write" },
    charge_order: { effect: "non_idempotent_write" },
  },
});
