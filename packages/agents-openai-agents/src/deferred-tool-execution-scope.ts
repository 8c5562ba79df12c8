import { AsyncLocalStorage } from "node:async_hooks";
import type { DeferredToolExecution } from "@perdure/agents";

const executions = new AsyncLocalStorage<DeferredToolExecution>();

/**
 * The durable call the current tool runs in: the whole
 * `DeferredToolExecution` (its `idempotencyKey`, `attempt`, `events`,
 * `heartbeat()`, abort signal and the call's record), or `undefined` outside a
 * tool Step (such as when the same agent runs with the SDK's own `run`).
 *
 * @example
 * const refundOrder = tool({
 *   name: "refund_order",
 *   parameters: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"], additionalProperties: false },
 *   strict: false,
 *   execute: ({ orderId }) => payments.refund(orderId, { idempotencyKey: getDeferredToolExecution()?.idempotencyKey }),
 * });
 */
export function getDeferredToolExecution(): DeferredToolExecution | undefined {
  return executions.getStore();
}

/** Runs `body` with `execution` as the current deferred tool execution. */
export function runInDeferredToolExecution<TResult>(execution: DeferredToolExecution, body: () => TResult): TResult {
  return executions.run(execution, body);
}
