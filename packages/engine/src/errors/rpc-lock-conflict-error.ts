import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** An RPC needs an Attribute lock that a running Step method holds. Safe to retry. */
export class RpcLockConflictError extends PerdureError {
  static readonly code = "rpc_lock_conflict";

  constructor(message: string, options?: { cause?: unknown }) {
    super(RpcLockConflictError.code, message, options);
  }

  static override isInstance(value: unknown): value is RpcLockConflictError {
    return hasErrorCode(value, RpcLockConflictError.code);
  }
}
