/**
 * The agent of the chat: an order desk on a scripted model (no key needed).
 * "refund order 1002" asks for approval and then calls the payment
 * provider, "exchange order 1001" asks which size. The Next.js route
 * handler serves its sessions and `perdure worker agents/agents.ts` runs
 * their Steps.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AgentSessionFlow } from "@perdure/agents";
import { createStepwiseAgentSessionFlow, functionTool, ScriptedModelClient, type ModelRequest, type ScriptedModelReply } from "@perdure/agents/stepwise";

const orders = new Map([
  ["1001", "Trail running shoes"],
  ["1002", "Rain jacket"],
  ["1003", "Headlamp"],
]);

/**
 * How long the payment provider takes to refund, in milliseconds
 * (`NEXTJS_CHAT_REFUND_DELAY_MS`, default 1000): long enough to watch a
 * Worker die in the middle of it and another finish the turn.
 */
function refundDelayMs(): number {
  const text = process.env["NEXTJS_CHAT_REFUND_DELAY_MS"] ?? "1000";
  const delay = Number(text);
  if (!Number.isSafeInteger(delay) || delay < 0) throw new Error(`NEXTJS_CHAT_REFUND_DELAY_MS ${JSON.stringify(text)} is not a whole number of milliseconds`);
  return delay;
}

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
  // The payment provider deduplicates refunds by order, so a retry after a crash refunds once.
  effect: "idempotent_write",
  requiresApproval: true,
  execute: async ({ order_id }, context) => {
    await sleep(refundDelayMs(), undefined, { signal: context.signal });
    const item = orders.get(order_id);
    return item === undefined ? `there is no order ${order_id}` : `refunded order ${order_id} (${item})`;
  },
});

/** The order desk agent; its Flow type `OrderDesk` is the `agent` of its sessions. */
export const orderDeskAgent: AgentSessionFlow = createStepwiseAgentSessionFlow({
  name: "order-desk",
  instructions: "Help customers with their orders. Refunds need the customer's approval.",
  model: new ScriptedModelClient(reply, { provider: "scripted-demo" }),
  tools: [refundOrder],
  builtInTools: ["ask_user"],
}, "OrderDesk");
