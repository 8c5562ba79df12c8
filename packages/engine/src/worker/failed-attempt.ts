/**
 * What a Worker reports when a Step method's attempt fails: the thrown value
 * itself (with its stack), before it is reduced to the persisted type and
 * message. For logs and developer tools; the retry and the failure route
 * happen as always.
 */
import type { FailedAttemptLogFields } from "../logging/perdure-logger.ts";

/** One failed attempt of a Step method, as `WorkerOptions.onAttemptFailed` gets it. */
export interface FailedAttempt {
  flowId: string;
  flowType: string;
  stepType: string;
  executionId: string;
  method: "wait_until" | "execute";
  /** 1 for the first attempt. */
  attempt: number;
  /** What the handler threw; for a method timeout, an `Error` named `StepTimeout`. */
  error: unknown;
}

/** The log fields of a failed attempt, the same in every logger: the attempt's coordinates and `err`, the thrown value. */
export function failedAttemptLogFields(failure: FailedAttempt): FailedAttemptLogFields {
  return { flowId: failure.flowId, flowType: failure.flowType, stepType: failure.stepType, executionId: failure.executionId, method: failure.method, attempt: failure.attempt, err: failure.error };
}

/**
 * The message of a failed attempt's log entry.
 *
 * @example
 * failedAttemptMessage(failure); // "session s1 (SupportAgent): RunModel attempt 2 failed (execution 4)"
 */
export function failedAttemptMessage(failure: FailedAttempt): string {
  const method = failure.method === "wait_until" ? " in waitUntil" : "";
  return `session ${failure.flowId} (${failure.flowType}): ${failure.stepType} attempt ${failure.attempt} failed${method} (execution ${failure.executionId})`;
}
