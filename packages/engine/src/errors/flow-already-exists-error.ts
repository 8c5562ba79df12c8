import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** A Flow instance with this flow ID was already started by another request. */
export class FlowAlreadyExistsError extends PerdureError {
  static readonly code = "flow_already_exists";

  constructor(message: string, options?: { cause?: unknown }) {
    super(FlowAlreadyExistsError.code, message, options);
  }

  static override isInstance(value: unknown): value is FlowAlreadyExistsError {
    return hasErrorCode(value, FlowAlreadyExistsError.code);
  }
}
