import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** The store was closed; open a new one to go on. */
export class StoreClosedError extends PerdureError {
  static readonly code = "store_closed";

  constructor(message: string, options?: { cause?: unknown }) {
    super(StoreClosedError.code, message, options);
  }

  static override isInstance(value: unknown): value is StoreClosedError {
    return hasErrorCode(value, StoreClosedError.code);
  }
}
