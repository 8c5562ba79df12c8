import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** An encoded value is larger than the store's `maxValueBytes`; the commit that carried it changes nothing. */
export class ValueTooLargeError extends PerdureError {
  static readonly code = "value_too_large";

  constructor(message: string, options?: { cause?: unknown }) {
    super(ValueTooLargeError.code, message, options);
  }

  static override isInstance(value: unknown): value is ValueTooLargeError {
    return hasErrorCode(value, ValueTooLargeError.code);
  }
}
