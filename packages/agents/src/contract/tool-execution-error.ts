const toolExecutionErrorMarker = Symbol.for("perdure.agents.tool-execution-error");

/**
 * Thrown by a runner's `executeDeferredToolCall` for a failure the model
 * should see. The call is recorded as `failed` and not retried.
 *
 * @example
 * throw new ToolExecutionError(`order ${orderId} does not exist`);
 */
export class ToolExecutionError extends Error {
  readonly code = "tool_execution_error";
  readonly [toolExecutionErrorMarker] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolExecutionError";
  }

  /** True for a `ToolExecutionError` from any copy of the package. */
  static isInstance(value: unknown): value is ToolExecutionError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[toolExecutionErrorMarker] === true;
  }
}
