/** Whether any attempt of the failed method ever reached a Worker. */
export const StepAttemptProgress = {
  /** No attempt was claimed by a Worker: the handler never ran. */
  NOT_STARTED: "NOT_STARTED",
  /** At least one attempt was claimed; its effects may have happened. */
  NOT_COMPLETED: "NOT_COMPLETED",
} as const;
export type StepAttemptProgress = (typeof StepAttemptProgress)[keyof typeof StepAttemptProgress];

/** What a failure route's recovery Step receives about the failed Step. */
export interface RecoveryError {
  /** The failed Step type. */
  readonly stepType: string;
  /** The last error's type, such as `Error`, `TerminalError`, `StepTimeout`, `HeartbeatTimeout` or `WorkerLost`. */
  readonly type: string;
  readonly message: string;
  readonly attemptProgress: StepAttemptProgress;
  /** Attempts claimed by Workers in all. */
  readonly attempts: number;
}
