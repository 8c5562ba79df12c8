/** A tiny order book standing in for the shop's real systems. */
export interface Order {
  orderId: string;
  item: string;
  status: "processing" | "shipped" | "delivered" | "refunded";
  amountCents: number;
}

const orders = new Map<string, Order>([
  ["1001", { orderId: "1001", item: "Trail running shoes", status: "shipped", amountCents: 12_900 }],
  ["1002", { orderId: "1002", item: "Rain jacket", status: "processing", amountCents: 8_450 }],
  ["1003", { orderId: "1003", item: "Headlamp", status: "delivered", amountCents: 3_200 }],
]);

/** Refunds already made, by idempotency key, so a retried request never refunds twice. */
const refundsByKey = new Map<string, string>();

export function findOrder(orderId: string): Order | undefined {
  return orders.get(orderId);
}

export function refundOrder(orderId: string, idempotencyKey: string): string {
  const done = refundsByKey.get(idempotencyKey);
  if (done !== undefined) return done;
  const order = orders.get(orderId);
  if (order === undefined) throw new Error(`order ${orderId} does not exist`);
  if (order.status === "refunded") return `order ${orderId} was already refunded`;
  order.status = "refunded";
  const receipt = `refunded ${(order.amountCents / 100).toFixed(2)} USD for order ${orderId} (${order.item})`;
  refundsByKey.set(idempotencyKey, receipt);
  return receipt;
}
