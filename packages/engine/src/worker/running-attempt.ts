import type { ClaimedAttempt } from "./claim-tasks.ts";

/** A running attempt as the Worker tracks it. */
export interface RunningAttempt {
  claim: ClaimedAttempt;
  abort: AbortController;
  /** Set when its closing Worker handed it back to the store: whatever the handler returns later is dropped. */
  released?: boolean;
  /**
   * Set when its handler starts. A single-attempt Step's attempt holds its
   * slot unstarted while the store confirms its claim (`Store.confirmClaim`).
   */
  started?: boolean;
}
