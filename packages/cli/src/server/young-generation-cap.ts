/**
 * Keeps V8's young generation of `perdure dev` at the size it reaches while
 * the server starts (two semi-spaces of 16 MiB). Under a sustained
 * allocation rate, such as twenty streaming chat clients, V8 doubles the
 * young generation after scavenges until it reaches its maximum, which Node
 * 24 sets at 64 MiB per semi-space on a 64-bit machine with plenty of
 * memory: the resident memory grew by about 100 MiB from that alone, while
 * the live heap stayed under 60 MiB (measured in bench/RESULTS.md).
 *
 * The maximum (`--max-semi-space-size`) can only be set when the process
 * starts, but V8 reads the growth factor (`--semi-space-growth-factor`, 2 by
 * default) each time it grows the young generation. So after every garbage
 * collection this sets the factor to 1 once the young generation reached
 * the cap, and back to 2 below it (the idle release in
 * `idle-memory-release.ts` shrinks it). A process started with a
 * semi-space flag of its own keeps what it asked for.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

/** The young generation's size (both semi-spaces) that `perdure dev` keeps to. */
export const youngGenerationCapBytes = 32 * 1024 * 1024;

/** V8's default growth factor of the young generation. */
const defaultGrowthFactor = 2;

/** How the cap reads and steers V8; replaced in tests. */
export interface YoungGenerationControls {
  /** The young generation's current size in bytes. */
  youngGenerationBytes(): number;
  /** Sets V8's `--semi-space-growth-factor`. */
  setGrowthFactor(factor: number): void;
  /** Calls `check` after each garbage collection; returns how to stop. */
  afterGarbageCollection(check: () => void): () => void;
}

/** The real controls: V8's heap statistics, its flags and garbage-collection performance entries. */
export const v8Controls: YoungGenerationControls = {
  youngGenerationBytes: () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0,
  setGrowthFactor: (factor) => setFlagsFromString(`--semi-space-growth-factor=${factor}`),
  afterGarbageCollection: (check) => {
    const observer = new PerformanceObserver(() => check());
    observer.observe({ entryTypes: ["gc"] });
    return () => observer.disconnect();
  },
};

/** Whether the process was started with a young-generation flag (command line or NODE_OPTIONS). */
export function hasOwnYoungGenerationFlag(execArgv: readonly string[] = process.execArgv, nodeOptions: string | undefined = process.env.NODE_OPTIONS): boolean {
  return [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some((flag) => /^--(max|min)[-_]semi[-_]space[-_]size\b|^--semi[-_]space[-_]growth[-_]factor\b/.test(flag));
}

/** A running cap: `stop()` stops watching and gives V8 its default growth back. */
export interface YoungGenerationCap {
  /** False when the process chose its own young-generation size, so nothing is capped. */
  readonly active: boolean;
  /** Whether the young generation is at the cap now (growth factor 1). */
  readonly holding: boolean;
  stop(): void;
}

/** Holds the young generation at `capBytes` from now on (see the module comment). */
export function startYoungGenerationCap(options: { capBytes?: number; controls?: YoungGenerationControls; execArgv?: readonly string[]; nodeOptions?: string | undefined } = {}): YoungGenerationCap {
  if (hasOwnYoungGenerationFlag(options.execArgv, "nodeOptions" in options ? options.nodeOptions : process.env.NODE_OPTIONS)) {
    return { active: false, holding: false, stop: () => undefined };
  }
  const capBytes = options.capBytes ?? youngGenerationCapBytes;
  const controls = options.controls ?? v8Controls;
  let holding = false;
  const check = (): void => {
    const atCap = controls.youngGenerationBytes() >= capBytes;
    if (atCap === holding) return;
    holding = atCap;
    controls.setGrowthFactor(atCap ? 1 : defaultGrowthFactor);
  };
  check();
  const stopWatching = controls.afterGarbageCollection(check);
  return {
    active: true,
    get holding() {
      return holding;
    },
    stop: () => {
      stopWatching();
      if (holding) controls.setGrowthFactor(defaultGrowthFactor);
      holding = false;
    },
  };
}
