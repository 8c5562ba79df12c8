/**
 * The one tool-execution scope: the durable call a deferred tool runs in,
 * readable from anywhere inside it. The session sets it around every
 * `executeDeferredToolCall` (`session/steps/tool-steps.ts`), so a tool of any
 * framework reads the same value through `currentToolExecution()`, which each
 * adapter package re-exports.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { DeferredToolExecution } from "./agent-framework-runner.ts";

const executions = new AsyncLocalStorage<DeferredToolExecution>();

/**
 * The durable call the current tool runs in: its `idempotencyKey` (the same
 * on every attempt), `attempt`, `toolCall`, `events`, `heartbeat()`,
 * `cancellationSignal` and checkpoint. `undefined` outside a tool Step: a
 * tool that a framework runs itself (a read inside the Claude Code harness,
 * the same agent under the framework's own loop) has none.
 *
 * @example
 * execute: ({ orderId }) => payments.refund(orderId, { idempotencyKey: currentToolExecution()?.idempotencyKey }),
 */
export function currentToolExecution(): DeferredToolExecution | undefined {
  return executions.getStore();
}

/** Runs `body` with `execution` as the current tool execution; the session does this for every deferred call. */
export function runInToolExecution<TResult>(execution: DeferredToolExecution, body: () => TResult): TResult {
  return executions.run(execution, body);
}
