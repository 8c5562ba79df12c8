/**
 * Tracing never fails a Step: every OpenTelemetry call goes through
 * `guardTracing`, which logs an error with `console.warn` the first time and
 * `console.debug` after that, and returns the fallback.
 */

let hasWarned = false;

/** Runs `operation`; on a throw, logs it once as a warning (then as debug) and returns `fallback`. */
export function guardTracing<TResult>(what: string, operation: () => TResult, fallback: TResult): TResult {
  try {
    return operation();
  } catch (error) {
    logTracingFailure(what, error);
    return fallback;
  }
}

/** Logs a tracing error: the first with `console.warn`, the rest with `console.debug`. */
export function logTracingFailure(what: string, error: unknown): void {
  const text = `perdure agents tracing: ${what} failed; the span is skipped and the Step goes on:`;
  if (hasWarned) {
    console.debug(text, error);
    return;
  }
  hasWarned = true;
  console.warn(text, error);
}
