import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { setImmediate as nextMacrotask, setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@perdure/engine";
import { SqliteStore, type SqliteDurability } from "@perdure/engine/sqlite";

/** One number a scenario measured, as printed in the table and stored in the JSON. */
export interface Measurement {
  scenario: string;
  metric: string;
  value: number;
  unit: string;
  /** The target this number is compared with, when the issue sets one. */
  target?: { maximum: number; text: string };
  note?: string;
}

/** What a scenario hands back: table rows plus raw samples for the JSON. */
export interface ScenarioResult {
  measurements: Measurement[];
  details: Record<string, unknown>;
}

/** Sizes a scenario runs with; `--quick` picks smaller ones. */
export interface BenchmarkSettings {
  quick: boolean;
}

/** A SQLite store in its own temporary folder, removed by `dispose`. */
export interface TemporaryBenchmarkStore {
  store: SqliteStore;
  path: string;
  dispose(): Promise<void>;
}

/** Opens the real SQLite store in a fresh temporary folder, so no scenario sees another's rows or WAL. */
export function openTemporaryBenchmarkStore(durability: SqliteDurability): TemporaryBenchmarkStore {
  const folder = mkdtempSync(join(tmpdir(), "perdure-bench-"));
  const path = join(folder, "engine.db");
  const store = SqliteStore.open({ path, durability });
  if (process.env["PERDURE_BENCH_GENERAL_PATH"] === "1") store.oneRequest = undefined;
  return {
    store,
    path,
    dispose: async () => {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The median of `ratios` with a 95 % bootstrap interval (resampled medians' 2.5th and 97.5th percentiles). */
export function medianWithInterval(ratios: readonly number[]): { median: number; low: number; high: number } {
  let seed = 12345;
  const random = (): number => {
    // A fixed-seed generator (mulberry32), so a run's interval does not change when it is recomputed.
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const medians: number[] = [];
  for (let sample = 0; sample < 2000; sample++) medians.push(median(ratios.map(() => ratios[Math.floor(random() * ratios.length)] ?? 1)));
  medians.sort((left, right) => left - right);
  return { median: median(ratios), low: medians[50] ?? Number.NaN, high: medians[1949] ?? Number.NaN };
}

/** One round of an overhead comparison: wall and process CPU time per Step, in milliseconds. */
export interface OverheadRound {
  wallMsPerStep: number;
  cpuMsPerStep: number;
}

/**
 * One measure of an off / on / control comparison run in interleaved rounds:
 * the off and on medians, and on's overhead and control's noise floor as
 * median per-round ratios to off, in percent, with 95 % intervals.
 */
export function overheadSummary(runs: { off: readonly OverheadRound[]; on: readonly OverheadRound[]; control: readonly OverheadRound[] }, kind: keyof OverheadRound) {
  const percent = (ratio: number): number => Number(((ratio - 1) * 100).toFixed(2));
  const compare = (against: readonly OverheadRound[]) => {
    const { median: middle, low, high } = medianWithInterval(against.map((run, round) => run[kind] / (runs.off[round]?.[kind] ?? Number.NaN)));
    return { medianPercent: percent(middle), interval95Percent: [percent(low), percent(high)] };
  };
  return {
    offMedianMsPerStep: Number(median(runs.off.map((run) => run[kind])).toFixed(4)),
    onMedianMsPerStep: Number(median(runs.on.map((run) => run[kind])).toFixed(4)),
    overhead: compare(runs.on),
    noiseFloor: compare(runs.control),
  };
}

/** Every order of three sides, used in turn so that no side always runs first or after another. */
export const threeSideOrders = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]] as const;

/**
 * Resolves when a flow is `completed`, once its final Step's execute has
 * signalled. The final commit is queued on the store's single connection
 * right after that execute returns (all in microtasks), so after one
 * macrotask a `describe` queues behind it and sees the committed status:
 * one cheap read per flow instead of a polling loop during the run.
 */
export async function confirmCompleted(client: Client, flowId: string): Promise<void> {
  await nextMacrotask();
  for (let tries = 0; ; tries++) {
    const description = await client.describe(flowId);
    if (description.status === "completed") return;
    if (description.status !== "running") throw new Error(`flow ${flowId} ended ${description.status}: ${description.error ?? ""}`);
    if (tries > 10_000) throw new Error(`flow ${flowId} did not complete after its final Step ran`);
    await sleep(1);
  }
}

/** Fails the benchmark on the first Worker error instead of timing a broken run. */
export class WorkerErrorCollector {
  readonly errors: unknown[] = [];
  readonly onError = (error: unknown): void => {
    this.errors.push(error);
  };

  throwIfAny(): void {
    if (this.errors.length > 0) throw new Error(`the Worker reported ${this.errors.length} error(s); first: ${String(this.errors[0])}`, { cause: this.errors[0] });
  }
}

/** Rejects when `work` takes longer than `limitMs`, so a stuck scenario cannot hang the run. */
export async function withTimeLimit<TResult>(description: string, limitMs: number, work: Promise<TResult>): Promise<TResult> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${description} took longer than ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export interface MachineDescription {
  nproc: number;
  cpuModel: string;
  node: string;
  platform: string;
  totalMemoryMiB: number;
}

export function describeMachine(): MachineDescription {
  return {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    totalMemoryMiB: Math.round(totalmem() / 1024 / 1024),
  };
}

/** Which code the numbers belong to: the commit, and whether the measured packages had uncommitted changes. */
export interface EngineRevision {
  commit: string;
  packagesDirty: boolean;
}

export function describeEngineRevision(repositoryRoot: string, packagePaths: readonly string[] = ["packages/engine"]): EngineRevision | undefined {
  try {
    const git = (...args: string[]): string => execFileSync("git", args, { cwd: repositoryRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return { commit: git("rev-parse", "HEAD"), packagesDirty: git("status", "--porcelain", "--", ...packagePaths).length > 0 };
  } catch {
    // Not a git checkout (an exported copy): the numbers still stand, without a revision.
    return undefined;
  }
}

export const mebibyte = 1024 * 1024;
