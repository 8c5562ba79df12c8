/** Options of `runBoundaryKillLoop`, their defaults, and their checks. */
import { tmpdir } from "node:os";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { BoundaryKillRunReport } from "./boundary-kill-report.ts";

/** Options of `runBoundaryKillLoop`. */
export interface BoundaryKillLoopOptions {
  /**
   * The boundary the first run kills at.
   * @default 1
   */
  fromBoundary?: number;
  /**
   * The last boundary to kill at. The loop ends earlier, at the first run
   * that reaches the end without a kill.
   * @default no limit (see `maxRuns`)
   */
  toBoundary?: number;
  /**
   * Kill at every `boundaryStep`-th boundary only: `fromBoundary`,
   * `fromBoundary + boundaryStep`, … A sample for a quick suite; the
   * loop still ends at the first run that reaches the end without a kill.
   * @default 1 (every boundary)
   */
  boundaryStep?: number;
  /**
   * The most runs the loop starts; a scenario that still kills after that
   * many (its boundaries never end) fails the loop.
   * @default 1000
   */
  maxRuns?: number;
  /**
   * Runs at once, each on its own store and processes. Most of a run is
   * spent waiting (process start, retry backoff), so a few at once cut the
   * loop's time even on two cores.
   * @default 1
   */
  concurrency?: number;
  /**
   * How long the first process may run before it dies at its boundary or the
   * scenario reaches its end; past that the run reports a stuck Flow.
   * @default 60_000
   */
  firstProcessTimeoutMs?: number;
  /**
   * The no-stuck-Flow bound: once the replacement is ready, the scenario must
   * reach its end within this. Recovery after a SIGKILL takes seconds with
   * default Worker options, so the default is generous.
   * @default 20_000
   */
  endTimeoutMs?: number;
  /**
   * How long a process may take to print its ready line.
   * @default 20_000
   */
  readyTimeoutMs?: number;
  /**
   * How often the loop asks the scenario's `isAtEnd`.
   * @default 20
   */
  pollIntervalMs?: number;
  /**
   * Throw an `AssertionError` listing every violation once the loop ended;
   * false returns them in the report.
   * @default true
   */
  failOnViolation?: boolean;
  /**
   * Give the processes a V8 compile cache (`NODE_COMPILE_CACHE`, in a folder
   * of the loop's own) unless this process already names one: every process
   * after the first then loads its modules, TypeScript included, from the
   * cache, which cuts a process's start-up to about a third.
   * @default true
   */
  compileCache?: boolean;
  /**
   * Where each run's folder is made.
   * @default the operating system's temporary folder
   */
  directory?: string;
  /** Called after each run, for progress output. @default nothing */
  onRun?: (run: BoundaryKillRunReport) => void;
}

export interface ResolvedBoundaryKillLoopOptions {
  fromBoundary: number;
  toBoundary: number;
  boundaryStep: number;
  maxRuns: number;
  concurrency: number;
  firstProcessTimeoutMs: number;
  endTimeoutMs: number;
  readyTimeoutMs: number;
  pollIntervalMs: number;
  failOnViolation: boolean;
  compileCache: boolean;
  directory: string;
  onRun: (run: BoundaryKillRunReport) => void;
}

export function resolveBoundaryKillLoopOptions(options: BoundaryKillLoopOptions): ResolvedBoundaryKillLoopOptions {
  const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
    const resolved = value ?? fallback;
    // Only an unset toBoundary is unlimited.
    if (!(value === undefined && resolved === Infinity) && (!Number.isSafeInteger(resolved) || resolved <= 0)) {
      throw new InvalidInputError(`runBoundaryKillLoop option ${name} ${String(value)} is invalid: use a positive integer`);
    }
    return resolved;
  };
  const resolved: ResolvedBoundaryKillLoopOptions = {
    fromBoundary: positiveInteger("fromBoundary", options.fromBoundary, 1),
    toBoundary: positiveInteger("toBoundary", options.toBoundary, Infinity),
    boundaryStep: positiveInteger("boundaryStep", options.boundaryStep, 1),
    maxRuns: positiveInteger("maxRuns", options.maxRuns, 1000),
    concurrency: positiveInteger("concurrency", options.concurrency, 1),
    firstProcessTimeoutMs: positiveInteger("firstProcessTimeoutMs", options.firstProcessTimeoutMs, 60_000),
    endTimeoutMs: positiveInteger("endTimeoutMs", options.endTimeoutMs, 20_000),
    readyTimeoutMs: positiveInteger("readyTimeoutMs", options.readyTimeoutMs, 20_000),
    pollIntervalMs: positiveInteger("pollIntervalMs", options.pollIntervalMs, 20),
    failOnViolation: options.failOnViolation ?? true,
    compileCache: options.compileCache ?? true,
    directory: options.directory ?? tmpdir(),
    onRun: options.onRun ?? (() => {}),
  };
  if (resolved.toBoundary < resolved.fromBoundary) {
    throw new InvalidInputError(`runBoundaryKillLoop toBoundary ${resolved.toBoundary} is before fromBoundary ${resolved.fromBoundary}: use toBoundary >= fromBoundary`);
  }
  for (const name of ["failOnViolation", "compileCache"] as const) {
    if (typeof resolved[name] !== "boolean") throw new InvalidInputError(`runBoundaryKillLoop option ${name} ${JSON.stringify(options[name])} is invalid: use true or false`);
  }
  return resolved;
}
