/**
 * Which seeds the session-program suite runs, where each seed's kills
 * strike, and the seeds kept because they once found a violation.
 */
import { programRandom } from "./program-random.ts";

/** Replays one seed: `PERDURE_SESSION_PROGRAM_SEED=<seed>`. */
export const sessionProgramSeedVariable = "PERDURE_SESSION_PROGRAM_SEED";

/** Runs seeds 1 to n: `PERDURE_SESSION_PROGRAM_SEEDS=<n>`. */
export const sessionProgramSeedCountVariable = "PERDURE_SESSION_PROGRAM_SEEDS";

/** Overrides a replayed seed's kill boundaries: `PERDURE_SESSION_PROGRAM_KILL_AT=<n>[,<n>…]`. */
export const sessionProgramKillAtVariable = "PERDURE_SESSION_PROGRAM_KILL_AT";

/** Seeds the default suite runs besides the regression seeds. */
export const defaultSessionProgramSeedCount = 3;
/**
 * The default seeds move each day (UTC) through 1 to `defaultSessionProgramSeedCount`
 * times this, the seeds `npm run test:soak` runs at once (1 to 60).
 */
export const sessionProgramRotatingRanges = 20;
const millisecondsPerDay = 86_400_000;

/**
 * Seeds that once found a violation, each with what it found; the default
 * suite always runs them. Add a seed here when a run fails, with its
 * finding, and keep it after the fix.
 */
export const sessionProgramRegressionSeeds: readonly { seed: number; finding: string }[] = [];

function parseCount(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name}=${JSON.stringify(text)} is invalid: use a positive integer`);
  return value;
}

/**
 * The seeds to run, from the environment: one replayed seed, seeds 1 to n, or
 * the regression seeds and the day's `defaultSessionProgramSeedCount` seeds
 * (days since 1970, `now`'s, pick the range).
 */
export function sessionProgramSeeds(environment: Record<string, string | undefined> = process.env, now = Date.now()): number[] {
  const replay = environment[sessionProgramSeedVariable] ?? "";
  if (replay !== "") {
    const seed = Number(replay);
    if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new RangeError(`${sessionProgramSeedVariable}=${JSON.stringify(replay)} is invalid: use an integer from 0 to 4294967295`);
    return [seed];
  }
  const countText = environment[sessionProgramSeedCountVariable] ?? "";
  const count = countText === "" ? defaultSessionProgramSeedCount : parseCount(sessionProgramSeedCountVariable, countText);
  const firstSeed = countText === "" ? 1 + defaultSessionProgramSeedCount * (Math.floor(now / millisecondsPerDay) % sessionProgramRotatingRanges) : 1;
  const seeds = Array.from({ length: count }, (_unused, index) => firstSeed + index);
  return [...new Set([...sessionProgramRegressionSeeds.map((entry) => entry.seed), ...seeds])];
}

/**
 * The durable boundaries a seed's kill runs strike at, spread over the
 * `boundaries` its run without a kill reached: the same seed picks the same
 * share of the run, so a replay kills at (about) the same point.
 * `PERDURE_SESSION_PROGRAM_KILL_AT` overrides them.
 */
export function sessionProgramKillBoundaries(seed: number, boundaries: number, kills: number, environment: Record<string, string | undefined> = process.env): number[] {
  const override = environment[sessionProgramKillAtVariable] ?? "";
  if (override !== "") return override.split(",").map((text) => parseCount(sessionProgramKillAtVariable, text.trim()));
  const random = programRandom((seed ^ 0x5bd1_e995) >>> 0);
  return Array.from({ length: kills }, () => 1 + Math.floor(random.next() * Math.max(1, boundaries)));
}

/** The command that replays `seed` (with its kill boundaries). */
export function sessionProgramReplayCommand(seed: number, killAtBoundaries: readonly number[]): string {
  const kills = killAtBoundaries.length === 0 ? "" : ` ${sessionProgramKillAtVariable}=${killAtBoundaries.join(",")}`;
  return `${sessionProgramSeedVariable}=${seed}${kills} node --conditions=perdure-source --test packages/agents/src/testing/session-programs/session-programs.integration.test.ts`;
}
