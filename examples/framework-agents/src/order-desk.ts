/**
 * What both example agents share: a tiny order book, the two tools' work,
 * and the demo script a scripted model follows when no model key is set.
 */

const orders = new Map<string, { item: string; status: string }>([
  ["1001", { item: "Trail running shoes", status: "shipped" }],
  ["1002", { item: "Rain jacket", status: "processing" }],
]);

/** Refund receipts by idempotency key, so a retried refund never refunds twice. */
const refunds = new Map<string, string>();

export function lookUpOrder(orderId: string): string {
  const order = orders.get(orderId);
  return order === undefined ? `There is no order ${orderId}.` : `Order ${orderId} (${order.item}) is ${order.status}.`;
}

export function refundOrder(orderId: string, idempotencyKey: string): string {
  const earlier = refunds.get(idempotencyKey);
  if (earlier !== undefined) return earlier;
  const order = orders.get(orderId);
  if (order === undefined) throw new Error(`order ${orderId} does not exist`);
  order.status = "refunded";
  const receipt = `Refunded order ${orderId} (${order.item}).`;
  refunds.set(idempotencyKey, receipt);
  return receipt;
}

export const orderDeskInstructions = "You help customers with their orders. Look orders up before you answer; refund only when asked.";

/** What the demo model does next, from the latest user text and the tool results since. */
export type DemoStep = { text: string } | { toolName: string; arguments: Record<string, unknown> };

export function nextDemoStep(userText: string, toolOutputs: readonly string[], agentName: string): DemoStep {
  if (toolOutputs.length > 0) return { text: toolOutputs.join(" ") };
  const orderId = /\b(\d{4})\b/.exec(userText)?.[1];
  if (orderId !== undefined && /refund/i.test(userText)) return { toolName: "refund_order", arguments: { order_id: orderId } };
  if (orderId !== undefined) return { toolName: "lookup_order", arguments: { order_id: orderId } };
  if (/\bnotes?\b/i.test(userText)) return { toolName: "notes__list_notes", arguments: {} };
  return { text: `Hello from the ${agentName} agent on a scripted model. Try: where is order 1001?, refund order 1002, or: what do our notes say?` };
}
