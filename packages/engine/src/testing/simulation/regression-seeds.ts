/**
 * Seeds that once broke an invariant, kept so the default suite replays
 * them on every run. Add a line for every violation a seed finds, with what
 * it found, once the bug is fixed.
 */
import type { SimulationMode } from "./simulation-plan.ts";

export interface RegressionSeed {
  seed: number;
  mode: SimulationMode;
  /** What the seed found. */
  found: string;
  /**
   * The run's `oneRequest`, pinned where the seed's plan drew it before that
   * flag existed, so it replays the run it was kept for.
   */
  oneRequest?: boolean;
}

const hotLoop = "a Worker whose claims were in doubt (a claim's reply lost) or whose store failed slept 0 ms between loop turns: a hot loop (1 ms on Node) until adoption or the store came back";

export const regressionSeeds: readonly RegressionSeed[] = [
  { seed: 4, mode: "liveness", found: hotLoop },
  { seed: 12, mode: "liveness", found: hotLoop },
  { seed: 34, mode: "liveness", found: hotLoop },
  { seed: 14, mode: "safety", found: hotLoop },
  { seed: 19, mode: "safety", found: hotLoop, oneRequest: false },
  { seed: 34, mode: "safety", found: hotLoop },
  { seed: 322, mode: "safety", found: "a claim adopted after its reply was lost recorded the adoption's time as its start, so a later check took recovery's entry for another run: a false report that the store lost commits" },
  { seed: 37, mode: "safety", found: "an attempt failed by lapse recovery was recorded as started when it became claimable, so its Worker took the entry for another run: a false report that the store lost commits" },
  { seed: 4785, mode: "safety", found: "a one-request Step commit that settled after the run had ended traced into the finished trace hash: an unhandled rejection that failed the test file" },
];
