import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A value passed to the engine (an RPC input, a start input, an option) is invalid. */
export class InvalidInputError extends PerdureError {
  static readonly code = "invalid_input";

  constructor(message: string, options?: { cause?: unknown }) {
    super(InvalidInputError.code, message, options);
  }

  static override isInstance(value: unknown): value is InvalidInputError {
    return hasErrorCode(value, InvalidInputError.code);
  }
}
