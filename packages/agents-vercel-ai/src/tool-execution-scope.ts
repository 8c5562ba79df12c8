import { AsyncLocalStorage } from "node:async_hooks";

/** What an AI SDK tool's `execute` can read about the durable call it runs in. */
export interface AgentToolExecutionScope {
  /** `<flowId>/<turnId>/<toolCallId>`, the same on every attempt: pass it to the system the tool writes to. */
  idempotencyKey: string;
  flowId: string;
  turnId: string;
  toolCallId: string;
  /** The tool Step's attempt, from 1. */
  attempt: number;
  /** Aborted when the tool Step's attempt is cancelled or times out. */
  signal: AbortSignal;
  /** An extra heartbeat for a long call; the session already sends one every 20 seconds. */
  heartbeat: () => Promise<void>;
}

const scopes = new AsyncLocalStorage<AgentToolExecutionScope>();

/**
 * The durable call the current AI SDK tool `execute` runs in, or `undefined`
 * outside one (such as when the same tool runs in a plain `ToolLoopAgent`).
 *
 * @example
 * const refundOrder = tool({
 *   inputSchema: jsonSchema<{ orderId: string }>({ type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] }),
 *   execute: async ({ orderId }) => payments.refund(orderId, { idempotencyKey: getAgentToolExecutionScope()?.idempotencyKey }),
 * });
 */
export function getAgentToolExecutionScope(): AgentToolExecutionScope | undefined {
  return scopes.getStore();
}

/** Runs `body` with `scope` as the current tool execution scope. */
export function runInAgentToolExecutionScope<TResult>(scope: AgentToolExecutionScope, body: () => TResult): TResult {
  return scopes.run(scope, body);
}
