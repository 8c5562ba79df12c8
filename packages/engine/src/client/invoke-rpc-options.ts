/**
 * Options of one `client.invokeRPC` call, and the one place their defaults
 * are resolved.
 */
import { describeValue } from "../errors/describe-value.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";

/** What {@link Client.invokeRPC} takes besides the RPC's input. */
export interface InvokeRpcOptions {
  /**
   * How long to keep calling again while a running Step holds a lock the RPC
   * declares. A lock is held only until that Step's method commits or fails,
   * so a caller that acts for a person (an approval, a Stop button) usually
   * waits rather than failing. When the time is up, the call throws the last
   * `RpcLockConflictError`.
   * @default 0 (fail fast with `RpcLockConflictError`)
   */
  lockConflictRetryMs?: number | undefined;
  /** Ends the retries early: the call then throws the last `RpcLockConflictError`. */
  signal?: AbortSignal | undefined;
}

/** {@link InvokeRpcOptions} with defaults applied. */
export interface ResolvedInvokeRpcOptions {
  lockConflictRetryMs: number;
  signal: AbortSignal | undefined;
}

/** Applies the defaults and checks the values; bad values throw `InvalidInputError` naming them. */
export function resolveInvokeRpcOptions(options: InvokeRpcOptions | undefined): ResolvedInvokeRpcOptions {
  const lockConflictRetryMs = options?.lockConflictRetryMs ?? 0;
  if (typeof lockConflictRetryMs !== "number" || !Number.isFinite(lockConflictRetryMs) || lockConflictRetryMs < 0) {
    throw new InvalidInputError(`lockConflictRetryMs ${describeValue(lockConflictRetryMs)} is invalid: use a number of milliseconds >= 0`);
  }
  return { lockConflictRetryMs, signal: options?.signal };
}
