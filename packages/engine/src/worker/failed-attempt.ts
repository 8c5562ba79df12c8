/**
 * What a Worker reports when a Step method's attempt fails: the thrown value
 * itself (with its stack), before it is reduced to the persisted type and
 * message. For logs and developer tools; the retry and the failure route
 * happen as always.
 */

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
