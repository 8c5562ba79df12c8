import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A Step read an AttributeMap instance or Channel that its load selection did not include. */
export class UnloadedStateError extends PerdureError {
  static readonly code = "unloaded_state";

  constructor(message: string, options?: { cause?: unknown }) {
    super(UnloadedStateError.code, message, options);
  }

  static override isInstance(value: unknown): value is UnloadedStateError {
    return hasErrorCode(value, UnloadedStateError.code);
  }
}
