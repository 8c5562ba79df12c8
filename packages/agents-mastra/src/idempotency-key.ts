/**
 * Where a Mastra tool finds its durable call's idempotency key: in the
 * request context the tool Step hands to the tool.
 */

/**
 * The request context key under which a tool Step puts the call's
 * idempotency key, `<flowId>/<turnId>/<toolCallId>`, the same on every
 * attempt. Read it in a tool's `execute` and pass it to the system the tool
 * writes to.
 *
 * @example
 * const refundOrder = createTool({
 *   id: "refund_order",
 *   description: "Refund an order.",
 *   inputSchema: z.object({ orderId: z.string() }),
 *   execute: async ({ orderId }, { requestContext }) =>
 *     payments.refund(orderId, { idempotencyKey: String(requestContext?.get(idempotencyKeyRequestContextKey)) }),
 * });
 */
export const idempotencyKeyRequestContextKey = "io.perdure/idempotencyKey";

