import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/** The Flow instance has completed, failed or been stopped, so it cannot move again. */
export class FlowNotRunningError extends PerdureError {
  static readonly code = "flow_not_running";

  constructor(message: string, options?: { cause?: unknown }) {
    super(FlowNotRunningError.code, message, options);
  }

  static override isInstance(value: unknown): value is FlowNotRunningError {
    return hasErrorCode(value, FlowNotRunningError.code);
  }
}
