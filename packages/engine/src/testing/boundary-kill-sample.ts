/**
 * Which boundaries a quick suite's boundary-kill loop kills at: every
 * `step`-th one from an offset the seed picks, so that consecutive seeds
 * (one a day by default) cover every boundary over `step` days, while a
 * soak run (`PERDURE_BOUNDARY_KILL_ALL=1`) kills at each one.
 */
import { InvalidInputError } from "../errors/invalid-input-error.ts";

/** Set to `1` to kill at every boundary (the soak script does). */
export const boundaryKillAllEnvironmentVariable = "PERDURE_BOUNDARY_KILL_ALL";
/** A non-negative integer that picks the sample; replays a failed sample. */
export const boundaryKillSeedEnvironmentVariable = "PERDURE_BOUNDARY_KILL_SEED";

const millisecondsPerDay = 86_400_000;

/** `fromBoundary` and `boundaryStep` for `runBoundaryKillLoop`, and what they cover. */
export interface BoundaryKillSample {
  fromBoundary: number;
  boundaryStep: number;
  /** True when every boundary is killed at. */
  isEveryBoundary: boolean;
  /** The seed that picked the offset; undefined when every boundary is killed at. */
  seed: number | undefined;
  /** One line for the test's diagnostics, saying how to replay the sample or run them all. */
  description: string;
}

/**
 * The boundaries to kill at: every one when `PERDURE_BOUNDARY_KILL_ALL=1`;
 * else every `step`-th from `1 + seed % step`, the seed being
 * `PERDURE_BOUNDARY_KILL_SEED` or the number of days since 1970 (UTC).
 *
 * @example
 * const sample = boundaryKillSample(4);
 * t.diagnostic(sample.description);
 * const report = await runBoundaryKillLoop(scenario, { fromBoundary: sample.fromBoundary, boundaryStep: sample.boundaryStep });
 * if (sample.isEveryBoundary) assertEveryBoundaryKind(report);
 */
export function boundaryKillSample(step: number, environment: NodeJS.ProcessEnv = process.env, now = Date.now()): BoundaryKillSample {
  if (!Number.isSafeInteger(step) || step <= 0) throw new InvalidInputError(`boundaryKillSample step ${step} is invalid: use a positive integer`);
  const all = environment[boundaryKillAllEnvironmentVariable] ?? "";
  if (all !== "" && all !== "0" && all !== "1") {
    throw new InvalidInputError(`${boundaryKillAllEnvironmentVariable}=${JSON.stringify(all)} is invalid: use 1 for every boundary, or 0`);
  }
  if (all === "1" || step === 1) {
    return { fromBoundary: 1, boundaryStep: 1, isEveryBoundary: true, seed: undefined, description: "every boundary" };
  }
  const seedText = environment[boundaryKillSeedEnvironmentVariable] ?? "";
  const seed = seedText === "" ? Math.floor(now / millisecondsPerDay) : Number(seedText);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new InvalidInputError(`${boundaryKillSeedEnvironmentVariable}=${JSON.stringify(seedText)} is invalid: use a non-negative integer`);
  }
  const fromBoundary = 1 + (seed % step);
  return {
    fromBoundary,
    boundaryStep: step,
    isEveryBoundary: false,
    seed,
    description: `boundaries ${fromBoundary}, ${fromBoundary + step}, ${fromBoundary + 2 * step}, … (seed ${seed}); `
      + `${boundaryKillSeedEnvironmentVariable}=${seed} replays this sample, ${boundaryKillAllEnvironmentVariable}=1 kills at every boundary`,
  };
}
