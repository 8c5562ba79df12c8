/**
 * `runBoundaryKillLoop`: SIGKILLs the process under test at its 1st, 2nd, …
 * durable boundary, one fresh run each, starts a replacement after each
 * kill and checks the invariants, until a run reaches the end without a kill.
 */
import { AssertionError } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { boundaryTraceEnvironmentVariable, killAtBoundaryEnvironmentVariable, type DurableBoundaryTraceEntry } from "../internal/durable-boundary.ts";
import { findLostAcknowledgedCommits } from "./boundary-kill-acknowledged-commits.ts";
import { resolveBoundaryKillLoopOptions, type BoundaryKillLoopOptions, type ResolvedBoundaryKillLoopOptions } from "./boundary-kill-options.ts";
import { boundaryKillPointOf, coverageOf, formatBoundaryKillReport, type BoundaryKillReport, type BoundaryKillRunReport } from "./boundary-kill-report.ts";
import type { BoundaryKillProcess, BoundaryKillProcessStart, BoundaryKillScenario } from "./boundary-kill-scenario.ts";
import { boundaryKillStartSignalEnvironmentVariable, sendBoundaryKillStartSignal } from "./boundary-kill-start-signal.ts";
import { readBoundaryTrace } from "./boundary-trace.ts";

interface RunOutcome {
  report: BoundaryKillRunReport;
  reachedByFirst: readonly DurableBoundaryTraceEntry[];
}

/** The files of one run, in its folder, and what every process of the loop gets in its environment. */
interface RunPaths {
  directory: string;
  sharedEnvironment: Record<string, string>;
  firstTrace: string;
  replacementTrace: string;
  startSignal: string;
}

/** A replacement started ahead of the kill, waiting for its start signal. */
interface StandingBy {
  start(): Promise<BoundaryKillProcess>;
  cancel(): Promise<void>;
}

/**
 * Kills the scenario's process at every durable boundary in turn: run n
 * starts a process armed to SIGKILL itself at its n-th boundary
 * (`PERDURE_KILL_AT_BOUNDARY`), starts a replacement once it died, waits for
 * the scenario's end (a Flow stuck past `endTimeoutMs` is a violation),
 * checks that no acknowledged commit was lost and the scenario's own
 * invariants, and goes on with n + 1 until a run reaches the end without a
 * kill. Every run has a fresh store. Violations name the boundary of their
 * run's kill; by default the loop throws an `AssertionError` listing them
 * all once it ended.
 *
 * @example
 * const report = await runBoundaryKillLoop(orderScenario, { concurrency: 2 });
 * t.diagnostic(formatBoundaryKillReport(report));
 * assert.ok(report.kills > 10);
 */
export async function runBoundaryKillLoop<TRun>(scenario: BoundaryKillScenario<TRun>, options: BoundaryKillLoopOptions = {}): Promise<BoundaryKillReport> {
  const resolved = resolveBoundaryKillLoopOptions(options);
  const startedAt = performance.now();
  const outcomes: RunOutcome[] = [];
  let nextBoundary = resolved.fromBoundary;
  let lastBoundary = resolved.toBoundary;
  let startedRuns = 0;
  let failure: { error: unknown } | undefined;
  const compileCache = resolved.compileCache && (process.env.NODE_COMPILE_CACHE ?? "") === ""
    ? mkdtempSync(join(resolved.directory, "perdure-boundary-kill-compile-cache-"))
    : undefined;
  const sharedEnvironment: Record<string, string> = compileCache === undefined ? {} : { NODE_COMPILE_CACHE: compileCache };
  const lane = async (): Promise<void> => {
    while (failure === undefined && nextBoundary <= lastBoundary && startedRuns < resolved.maxRuns) {
      const killAtBoundary = nextBoundary;
      nextBoundary += resolved.boundaryStep;
      startedRuns += 1;
      try {
        const outcome = await runOnce(scenario, killAtBoundary, resolved, sharedEnvironment);
        outcomes.push(outcome);
        resolved.onRun(outcome.report);
        // Later boundaries do not exist in a run that ended without reaching this one.
        if (outcome.report.killedAt === undefined) lastBoundary = Math.min(lastBoundary, killAtBoundary);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: resolved.concurrency }, lane));
  } finally {
    if (compileCache !== undefined) rmSync(compileCache, { recursive: true, force: true });
  }
  if (failure !== undefined) throw failure.error;
  outcomes.sort((left, right) => left.report.killAtBoundary - right.report.killAtBoundary);
  const complete = outcomes.find((outcome) => outcome.report.killedAt === undefined);
  if (complete === undefined && resolved.toBoundary === Infinity) {
    throw new Error(`runBoundaryKillLoop ${scenario.name}: every one of ${resolved.maxRuns} runs was killed, so the scenario never reached its end without a kill; raise maxRuns or shorten the scenario`);
  }
  const runs = outcomes.map((outcome) => outcome.report);
  const report: BoundaryKillReport = {
    scenario: scenario.name,
    runs,
    kills: runs.filter((run) => run.killedAt !== undefined).length,
    boundaries: coverageOf(runs),
    completeRun: complete?.reachedByFirst ?? [],
    violations: runs.flatMap((run) => run.violations.map((message) => ({ killAtBoundary: run.killAtBoundary, killedAt: run.killedAt, message }))),
    maxRecoveryMs: Math.max(0, ...runs.map((run) => run.recoveryMs ?? 0)),
    durationMs: performance.now() - startedAt,
  };
  if (resolved.failOnViolation && report.violations.length > 0) {
    throw new AssertionError({ message: `runBoundaryKillLoop found ${report.violations.length} violations\n${formatBoundaryKillReport(report)}` });
  }
  return report;
}

/** One run: kill at `killAtBoundary`, replace, wait for the end, check. */
async function runOnce<TRun>(
  scenario: BoundaryKillScenario<TRun>,
  killAtBoundary: number,
  options: ResolvedBoundaryKillLoopOptions,
  sharedEnvironment: Record<string, string>,
): Promise<RunOutcome> {
  const startedAt = performance.now();
  const paths = runPathsIn(mkdtempSync(join(options.directory, `perdure-boundary-kill-${killAtBoundary}-`)), sharedEnvironment);
  const processes: BoundaryKillProcess[] = [];
  const violations: string[] = [];
  let standingBy: StandingBy | undefined;
  let run: TRun | undefined;
  try {
    run = await scenario.setUp({ killAtBoundary, directory: paths.directory });
    const currentRun = run;
    const isAtEnd = (): Promise<boolean> => scenario.isAtEnd(currentRun).catch(() => false);
    const describeState = async (): Promise<string> => {
      if (scenario.describeState === undefined) return "";
      return `\nstate: ${await scenario.describeState(currentRun).catch((error: unknown) => `cannot be described: ${String(error)}`)}`;
    };
    const first = await scenario.startProcess(run, {
      environment: {
        ...paths.sharedEnvironment,
        [killAtBoundaryEnvironmentVariable]: String(killAtBoundary),
        [boundaryTraceEnvironmentVariable]: paths.firstTrace,
        [boundaryKillStartSignalEnvironmentVariable]: "",
      },
      isReplacement: false,
      readyTimeoutMs: options.readyTimeoutMs,
    });
    processes.push(first);
    if (scenario.standsBy === true) standingBy = standBy(scenario, run, paths, options);
    await scenario.begin?.(run);

    const firstEnd = await waitForEndOrExit(first, isAtEnd, options.firstProcessTimeoutMs, options.pollIntervalMs);
    if (firstEnd === "timeout") {
      violations.push(`stuck: the first process neither reached boundary ${killAtBoundary} nor the scenario's end within ${options.firstProcessTimeoutMs} ms${await describeState()}\n${outputTail(first)}`);
      await first.kill();
    } else if (firstEnd === "end") {
      await first.stop();
    }
    const firstExit = await first.exited;
    const reachedByFirst = readBoundaryTrace(paths.firstTrace);
    const killed = reachedByFirst.find((entry) => entry.action === "kill");
    if (killed === undefined && firstEnd === "exited") {
      violations.push(`the first process exited (${firstExit}) by itself before boundary ${killAtBoundary}:\n${outputTail(first)}`);
    }
    if (killed === undefined && firstEnd === "end" && firstExit !== 0) {
      violations.push(`the first process exited ${firstExit} on SIGTERM instead of draining and exiting 0:\n${outputTail(first)}`);
    }

    let isStuck = firstEnd !== "end" && killed === undefined;
    let recoveryMs: number | undefined;
    let replacement: BoundaryKillProcess | undefined;
    if (killed !== undefined) {
      replacement = standingBy === undefined ? await scenario.startProcess(run, replacementStart(paths, options.readyTimeoutMs)) : await standingBy.start();
      standingBy = undefined;
      processes.push(replacement);
      const readyAt = performance.now();
      const replacementEnd = await waitForEndOrExit(replacement, isAtEnd, options.endTimeoutMs, options.pollIntervalMs);
      if (replacementEnd === "end") {
        recoveryMs = performance.now() - readyAt;
        const exit = await replacement.stop();
        if (exit !== 0) violations.push(`the replacement exited ${exit} on SIGTERM instead of draining and exiting 0:\n${outputTail(replacement)}`);
      } else {
        isStuck = true;
        violations.push(replacementEnd === "timeout"
          ? `stuck: the scenario did not reach its end within ${options.endTimeoutMs} ms after the replacement started${await describeState()}\n${outputTail(replacement)}`
          : `the replacement exited (${await replacement.exited}) before the scenario's end:\n${outputTail(replacement)}`);
        await replacement.kill();
      }
    }
    const reachedByReplacement = readBoundaryTrace(paths.replacementTrace);

    const readStepHistory = scenario.readStepHistory?.bind(scenario);
    if (readStepHistory !== undefined) violations.push(...await findLostAcknowledgedCommits(reachedByFirst, (flowId) => readStepHistory(currentRun, flowId)));
    // A stuck run is reported as such; its end state would only add noise.
    if (!isStuck) {
      try {
        await scenario.checkInvariants(run, {
          killAtBoundary, killedAt: killed, reachedByFirst, reachedByReplacement, firstProcessId: first.pid, replacementProcessId: replacement?.pid,
        });
      } catch (error) {
        violations.push(error instanceof Error ? error.message : String(error));
      }
    }
    return {
      report: {
        killAtBoundary,
        killedAt: killed === undefined ? undefined : boundaryKillPointOf(killed),
        boundariesReached: reachedByFirst.length,
        recoveryMs,
        durationMs: performance.now() - startedAt,
        violations,
      },
      reachedByFirst,
    };
  } finally {
    await standingBy?.cancel();
    for (const child of processes) await child.kill();
    try {
      if (run !== undefined) await scenario.tearDown(run);
    } finally {
      rmSync(paths.directory, { recursive: true, force: true });
    }
  }
}

function runPathsIn(directory: string, sharedEnvironment: Record<string, string>): RunPaths {
  return {
    directory,
    sharedEnvironment,
    firstTrace: join(directory, "first.boundaries.jsonl"),
    replacementTrace: join(directory, "replacement.boundaries.jsonl"),
    startSignal: join(directory, "replacement.start"),
  };
}

function replacementStart(paths: RunPaths, readyTimeoutMs: number, startSignal = ""): BoundaryKillProcessStart {
  return {
    environment: {
      ...paths.sharedEnvironment,
      [killAtBoundaryEnvironmentVariable]: "",
      [boundaryTraceEnvironmentVariable]: paths.replacementTrace,
      [boundaryKillStartSignalEnvironmentVariable]: startSignal,
    },
    isReplacement: true,
    readyTimeoutMs,
  };
}

/** Starts the replacement now; it loads its modules and waits for the signal before its Worker starts. */
function standBy<TRun>(scenario: BoundaryKillScenario<TRun>, run: TRun, paths: RunPaths, options: ResolvedBoundaryKillLoopOptions): StandingBy {
  // It prints its ready line only after the signal, which may come at the end of the first process's run.
  const starting = scenario.startProcess(run, replacementStart(paths, options.firstProcessTimeoutMs + options.readyTimeoutMs, paths.startSignal));
  // Observed by start() or cancel(); a replacement told to leave rejects, as it exits before its ready line.
  starting.catch(() => undefined);
  return {
    start: () => {
      sendBoundaryKillStartSignal(paths.startSignal, "start");
      return starting;
    },
    cancel: async () => {
      sendBoundaryKillStartSignal(paths.startSignal, "exit");
      const started = await starting.catch(() => undefined);
      await started?.kill();
    },
  };
}

/** Polls `isAtEnd` until it holds, the process exits, or the time runs out. */
async function waitForEndOrExit(
  child: BoundaryKillProcess,
  isAtEnd: () => Promise<boolean>,
  timeoutMs: number,
  pollIntervalMs: number,
): Promise<"end" | "exited" | "timeout"> {
  let hasExited = false;
  void child.exited.then(() => {
    hasExited = true;
  });
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (hasExited) return "exited";
    if (await isAtEnd()) return "end";
    if (performance.now() >= deadline) return "timeout";
    await Promise.race([new Promise((resolve) => setTimeout(resolve, pollIntervalMs)), child.exited]);
  }
}

function outputTail(child: BoundaryKillProcess): string {
  return child.output().split("\n").slice(-30).join("\n");
}
