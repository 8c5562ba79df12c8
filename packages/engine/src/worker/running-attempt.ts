import type { ClaimedAttempt } from "./claim-tasks.ts";

/** A running attempt as the Worker tracks it. */
export interface RunningAttempt {
  claim: ClaimedAttempt;
  abort: AbortController;
}
