/**
 * What `runBoundaryKillLoop` reports: each run, the boundaries it killed at,
 * and every invariant a run broke, named by the boundary of its kill.
 */
import type { DurableBoundaryName, DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";

/** Where a process was when it was killed: a trace entry without its bookkeeping. */
export interface BoundaryKillPoint {
  /** The boundary's position in the first process's sequence (1-based). */
  boundary: number;
  name: DurableBoundaryName;
  flowId: string;
  detail: string | null;
}

/** An invariant one run broke. */
export interface BoundaryKillViolation {
  killAtBoundary: number;
  /** Where the first process was killed; undefined for a run without a kill. */
  killedAt: BoundaryKillPoint | undefined;
  message: string;
}

/** One run of the loop. */
export interface BoundaryKillRunReport {
  killAtBoundary: number;
  /** Undefined when the first process reached the end before boundary `killAtBoundary`. */
  killedAt: BoundaryKillPoint | undefined;
  /** Boundaries the first process reached, the fatal one included. */
  boundariesReached: number;
  /** From the replacement's ready line to the scenario's end; undefined without a kill or when stuck. */
  recoveryMs: number | undefined;
  durationMs: number;
  violations: readonly string[];
}

/** How often the loop killed at one boundary name. */
export interface BoundaryKillCoverage {
  name: DurableBoundaryName;
  kills: number;
  /** What passed it in those kills (Step types, RPC names, tool names), each once, in first-seen order. */
  details: readonly string[];
}

/** The result of `runBoundaryKillLoop`. */
export interface BoundaryKillReport {
  scenario: string;
  /** Every run, by `killAtBoundary`. */
  runs: readonly BoundaryKillRunReport[];
  /** Runs that killed their first process. */
  kills: number;
  /** The boundary names killed at, in the order of their first kill. */
  boundaries: readonly BoundaryKillCoverage[];
  /** The boundaries of the first run that reached the end without a kill: the scenario's whole sequence. */
  completeRun: readonly DurableBoundaryTraceEntry[];
  violations: readonly BoundaryKillViolation[];
  /** The longest `recoveryMs` of any run. */
  maxRecoveryMs: number;
  durationMs: number;
}

/** Turns a trace entry into the point the report names. */
export function boundaryKillPointOf(entry: DurableBoundaryTraceEntry): BoundaryKillPoint {
  return { boundary: entry.boundary, name: entry.name, flowId: entry.flowId, detail: entry.detail };
}

/** `#12 worker.commit.after-commit (order-1 Charge)`. */
export function describeBoundaryKillPoint(point: BoundaryKillPoint | undefined): string {
  if (point === undefined) return "no kill";
  return `#${point.boundary} ${point.name} (${point.flowId}${point.detail === null ? "" : ` ${point.detail}`})`;
}

/** Counts the kills of each boundary name over the runs. */
export function coverageOf(runs: readonly BoundaryKillRunReport[]): BoundaryKillCoverage[] {
  const byName = new Map<DurableBoundaryName, { kills: number; details: string[] }>();
  for (const run of runs) {
    if (run.killedAt === undefined) continue;
    const coverage = byName.get(run.killedAt.name) ?? { kills: 0, details: [] };
    coverage.kills += 1;
    if (run.killedAt.detail !== null && !coverage.details.includes(run.killedAt.detail)) coverage.details.push(run.killedAt.detail);
    byName.set(run.killedAt.name, coverage);
  }
  return [...byName].map(([name, coverage]) => ({ name, ...coverage }));
}

/**
 * A few lines for a test's diagnostics: runs, kills, duration, the kills of
 * each boundary name, and the violations.
 *
 * @example
 * const report = await runBoundaryKillLoop(scenario);
 * t.diagnostic(formatBoundaryKillReport(report));
 */
export function formatBoundaryKillReport(report: BoundaryKillReport): string {
  const lines = [
    `${report.scenario}: ${report.runs.length} runs, ${report.kills} kills, ${report.completeRun.length} boundaries in a run without a kill, `
      + `${(report.durationMs / 1000).toFixed(1)} s, slowest recovery ${Math.round(report.maxRecoveryMs)} ms`,
    ...report.boundaries.map((coverage) => `  ${coverage.name}: ${coverage.kills} kills (${coverage.details.join(", ")})`),
  ];
  if (report.violations.length === 0) lines.push("  no violations");
  for (const violation of report.violations) {
    lines.push(`  VIOLATION killed at ${describeBoundaryKillPoint(violation.killedAt)} (run ${violation.killAtBoundary}): ${violation.message}`);
  }
  return lines.join("\n");
}
