/**
 * The agent this example serves: a small order desk whose refunds wait for
 * the user's approval and which asks which size for an exchange. It runs on
 * a scripted model, so the example needs no model key. Both processes load
 * this module: the web server (`main.ts`) to serve the agent's sessions, and
 * `perdure worker src/agents.ts` to run their Steps.
 */
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";

const orders = new Map([
  ["1001", "Trail running shoes"],
  ["1002", "Rain jacket"],
  ["1003", "Headlamp"],
]);

/** The demo model: refunds call `refund_order`, exchanges ask which size, anything else is echoed. */
function reply(request: ModelRequest): ScriptedModelReply {
  const results = ScriptedModelClient.toolResults(request);
  if (results.length > 0) return { text: results.map((result) => `${result.toolName}: ${String(result.output)}`).join(" ") };
  const userText = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  const orderId = /\b(\d{4})\b/.exec(userText)?.[1];
  if (/refund/i.test(userText) && orderId !== undefined) {
    return { text: `I can refund order ${orderId} once you approve.`, toolCalls: [{ name: "refund_order", arguments: { order_id: orderId } }] };
  }
  if (/exchange/i.test(userText)) {
    return { text: "Which size would you like instead?", toolCalls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M", "L"], allows_free_text: false } }] };
  }
  return { text: `You said: ${userText}. Ask me to refund or exchange an order (1001, 1002 or 1003).` };
}

const refundOrder = functionTool<{ order_id: string }>({
  name: "refund_order",
  description: "Refund an order in full. The user must approve it.",
  parameters: { type: "object", properties: { order_id: { type: "string", description: "The order number, such as 1001." } }, required: ["order_id"], additionalProperties: false },
  // A payment: run at most once, and only after the user approved it.
  effect: "non_idempotent_write",
  requiresApproval: true,
  execute: ({ order_id }) => {
    const item = orders.get(order_id);
    return item === undefined ? `there is no order ${order_id}` : `refunded order ${order_id} (${item})`;
  },
});

/** The order desk agent; its Flow type `OrderDesk` is the `agent` of its sessions. */
export const orderDeskAgent = createStepwiseAgentSessionFlow({
  name: "order-desk",
  instructions: "Help customers with their orders. Refunds need the customer's approval.",
  model: new ScriptedModelClient(reply, { provider: "scripted-demo" }),
  tools: [refundOrder],
  builtInTools: ["ask_user"],
}, "OrderDesk");
