/**
 * The durable call a deferred Claude Agent SDK tool runs in, read through
 * `currentDeferredToolExecution()` inside the tool's handler.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { DeferredToolExecution } from "@perdure/agents";

const executions = new AsyncLocalStorage<DeferredToolExecution>();

/**
 * The durable call the current tool handler runs in: the whole
 * `DeferredToolExecution` (its `idempotencyKey`, `attempt`, `events`,
 * `heartbeat()`, abort signal and the call's record). `undefined` when the
 * handler runs inside the Claude Code harness, as a read tool does, or
 * outside a session.
 *
 * @example
 * const refundOrder = tool("refund_order", "Refund an order.", { orderId: z.string() }, async ({ orderId }) => {
 *   const receipt = await payments.refund(orderId, { idempotencyKey: currentDeferredToolExecution()?.idempotencyKey });
 *   return { content: [{ type: "text", text: receipt }] };
 * });
 */
export function currentDeferredToolExecution(): DeferredToolExecution | undefined {
  return executions.getStore();
}

/** Runs `body` with `execution` as the current deferred tool execution. */
export function runInDeferredToolExecution<TResult>(execution: DeferredToolExecution, body: () => TResult): TResult {
  return executions.run(execution, body);
}
