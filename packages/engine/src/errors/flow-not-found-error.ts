import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** No Flow instance has the given flow ID in this store. */
export class FlowNotFoundError extends PerdureError {
  static readonly code = "flow_not_found";

  constructor(message: string, options?: { cause?: unknown }) {
    super(FlowNotFoundError.code, message, options);
  }

  static override isInstance(value: unknown): value is FlowNotFoundError {
    return hasErrorCode(value, FlowNotFoundError.code);
  }
}
