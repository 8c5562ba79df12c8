import { performance, type EventLoopUtilization } from "node:perf_hooks";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../../engine/support.ts";
import { median, withTimeLimit } from "../../engine/support.ts";
import { checkSessionState, openSessionBench, percentile, runOneTurn, startSession, type TurnTiming } from "../session-bench.ts";

interface ConcurrentSessionsRun {
  workerConcurrency: number;
  sessions: number;
  windowMs: number;
  turnsInWindow: number;
  turnsPerSecond: number;
  medianTurnMs: number;
  p99TurnMs: number;
  cpuMsPerTurn: number;
  /** Process CPU time over wall time in the window: 1 is one full core. */
  cpuShare: number;
  /**
   * Share of the window the event loop was not idle. Near 1 with a low
   * `cpuShare` means the process was runnable but got no core (other
   * processes), or was blocked in a synchronous SQLite call.
   */
  eventLoopUtilization: number;
  totalTurns: number;
}

/**
 * Turns per second with many sessions at once: every session sends its next
 * message as soon as its previous turn ended. After a ramp-up, only the turns
 * that end inside a fixed window count, so neither the start nor the drain
 * of 100 sessions is in the number.
 */
async function runSessions(workerConcurrency: number, sessions: number, rampMs: number, windowMs: number): Promise<ConcurrentSessionsRun> {
  const bench = await openSessionBench("process-crash-safe", workerConcurrency);
  try {
    return await withTimeLimit(`${sessions} concurrent sessions, Worker concurrency ${workerConcurrency}`, 90_000, (async () => {
      const sessionIds = Array.from({ length: sessions }, (_unused, index) => `session-${index}`);
      await Promise.all(sessionIds.map((sessionId) => startSession(bench, sessionId)));
      const startedAt = performance.now();
      const windowStart = startedAt + rampMs;
      const windowEnd = windowStart + windowMs;
      // CPU and event loop use inside the window, sampled by two timers (a busy loop may run them a little late).
      let atWindowStart: { at: number; cpu: NodeJS.CpuUsage; loop: EventLoopUtilization } | undefined;
      let inWindow: { ms: number; cpuMs: number; loopUtilization: number } | undefined;
      const windowStartTimer = setTimeout(() => {
        atWindowStart = { at: performance.now(), cpu: process.cpuUsage(), loop: performance.eventLoopUtilization() };
      }, rampMs);
      const windowEndTimer = setTimeout(() => {
        if (atWindowStart === undefined) return;
        const cpu = process.cpuUsage(atWindowStart.cpu);
        inWindow = { ms: performance.now() - atWindowStart.at, cpuMs: (cpu.user + cpu.system) / 1000, loopUtilization: performance.eventLoopUtilization(atWindowStart.loop).utilization };
      }, rampMs + windowMs);
      const turnCounts = new Map<string, number>();
      const timings: TurnTiming[] = [];
      await Promise.all(sessionIds.map(async (sessionId) => {
        let turn = 0;
        while (performance.now() < windowEnd) {
          turn += 1;
          timings.push(await runOneTurn(bench, sessionId, turn));
        }
        turnCounts.set(sessionId, turn);
      }));
      clearTimeout(windowStartTimer);
      clearTimeout(windowEndTimer);
      if (inWindow === undefined) throw new Error("the window timers did not run");
      for (const sessionId of sessionIds) await checkSessionState(bench, sessionId, turnCounts.get(sessionId) ?? 0);
      bench.errors.throwIfAny();
      const ended = timings.filter((timing) => timing.endedAt >= windowStart && timing.endedAt < windowEnd);
      return {
        workerConcurrency,
        sessions,
        windowMs,
        turnsInWindow: ended.length,
        turnsPerSecond: ended.length / (windowMs / 1000),
        medianTurnMs: median(ended.map((timing) => timing.ms)),
        p99TurnMs: percentile(ended.map((timing) => timing.ms), 99),
        cpuMsPerTurn: inWindow.cpuMs / ended.length,
        cpuShare: inWindow.cpuMs / inWindow.ms,
        eventLoopUtilization: inWindow.loopUtilization,
        totalTurns: timings.length,
      };
    })());
  } finally {
    await bench.dispose();
  }
}

export async function measureConcurrentSessions(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const sessions = 100;
  const rampMs = settings.quick ? 1000 : 2000;
  const windowMs = settings.quick ? 2000 : 8000;
  const runs: ConcurrentSessionsRun[] = [];
  for (const workerConcurrency of [8, 32]) runs.push(await runSessions(workerConcurrency, sessions, rampMs, windowMs));
  const measurements: Measurement[] = runs.flatMap((run) => {
    const scenario = "sessions process-crash-safe";
    return [
      {
        scenario,
        metric: `turns/s with ${run.sessions} concurrent sessions, Worker concurrency ${run.workerConcurrency}`,
        value: run.turnsPerSecond,
        unit: "turns/s",
        note: `${run.turnsInWindow} turns ended in a ${run.windowMs / 1000} s window after ${rampMs / 1000} s ramp-up`,
      },
      { scenario, metric: `turn latency, median (Worker concurrency ${run.workerConcurrency})`, value: run.medianTurnMs, unit: "ms" },
      { scenario, metric: `turn latency, p99 (Worker concurrency ${run.workerConcurrency})`, value: run.p99TurnMs, unit: "ms" },
      { scenario, metric: `process CPU per turn (Worker concurrency ${run.workerConcurrency})`, value: run.cpuMsPerTurn, unit: "ms" },
      {
        scenario,
        metric: `process CPU in the window, % of one core (Worker concurrency ${run.workerConcurrency})`,
        value: run.cpuShare * 100,
        unit: "%",
        note: `event loop busy ${(run.eventLoopUtilization * 100).toFixed(0)} % of the window`,
      },
    ];
  });
  return { measurements, details: { sessions, rampMs, windowMs, runs } };
}
