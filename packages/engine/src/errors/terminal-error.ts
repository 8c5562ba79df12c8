import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/**
 * Thrown by a Step handler to fail the current method without further retries.
 * The execution goes straight to its failure route (or fails the Flow).
 *
 * @example
 * throw new TerminalError(`order ${orderId} does not exist`);
 */
export class TerminalError extends PerdureError {
  static readonly code = "terminal";

  constructor(message: string, options?: { cause?: unknown }) {
    super(TerminalError.code, message, options);
  }

  static override isInstance(value: unknown): value is TerminalError {
    return hasErrorCode(value, TerminalError.code);
  }
}
