import { hasErrorCode, PerdureError } from "./perdure-error.ts";

/**
 * Thrown by a Step handler to ask that the next attempt wait at least
 * `retryAfterMs`, such as when a provider answered 429 with `retry-after`.
 * The wait stays within the method's retry policy: it never exceeds
 * `maximumIntervalMs`, counts as an attempt, and ends the retries when it
 * would pass `totalDurationMs`.
 *
 * @example
 * throw new RetryAfterError("rate limited by the provider", { retryAfterMs: 20_000, cause: error });
 */
export class RetryAfterError extends PerdureError {
  static readonly code = "retry_after";
  /** The least time before the next attempt, in milliseconds. */
  readonly retryAfterMs: number;

  /** A missing, negative or non-finite `retryAfterMs` asks for no extra wait. */
  constructor(message: string, options: { retryAfterMs: number; cause?: unknown } = { retryAfterMs: 0 }) {
    super(RetryAfterError.code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = Number.isFinite(options.retryAfterMs) && options.retryAfterMs > 0 ? options.retryAfterMs : 0;
  }

  static override isInstance(value: unknown): value is RetryAfterError {
    return hasErrorCode(value, RetryAfterError.code);
  }
}
