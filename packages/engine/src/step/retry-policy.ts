/** How failed attempts of a Step method are retried. */
export interface RetryPolicy {
  /** @default 1000 */
  initialIntervalMs?: number;
  /** @default 2 */
  backoffCoefficient?: number;
  /** @default 60_000 */
  maximumIntervalMs?: number;
  /** Attempts in all, including the first. @default 3 */
  maximumAttempts?: number;
  /**
   * Time from the first scheduling of the method after which no new attempt
   * starts. An execution still queued then fails with `attemptProgress`
   * `NOT_STARTED` if no attempt ever reached a Worker.
   * @default no limit
   */
  totalDurationMs?: number | null;
}

export interface ResolvedRetryPolicy {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  maximumAttempts: number;
  totalDurationMs: number | null;
}

/** Delay before attempt number `nextAttempt` (2 for the first retry). */
export function retryDelayMs(policy: ResolvedRetryPolicy, nextAttempt: number): number {
  const exponent = Math.max(0, nextAttempt - 2);
  return Math.min(policy.maximumIntervalMs, policy.initialIntervalMs * policy.backoffCoefficient ** exponent);
}
