import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A decision or RPC moved to a Step type the Flow does not define. */
export class UnknownStepError extends PerdureError {
  static readonly code = "unknown_step";

  constructor(message: string, options?: { cause?: unknown }) {
    super(UnknownStepError.code, message, options);
  }

  static override isInstance(value: unknown): value is UnknownStepError {
    return hasErrorCode(value, UnknownStepError.code);
  }
}
