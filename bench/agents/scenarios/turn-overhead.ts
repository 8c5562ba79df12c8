import { setTimeout as sleep } from "node:timers/promises";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../../engine/support.ts";
import { median, withTimeLimit } from "../../engine/support.ts";
import { checkSessionState, countTransactions, openSessionBench, percentile, runOneTurn, startSession, type SessionBench, type TurnTiming } from "../session-bench.ts";

/** Step methods of one turn, read from a session's Step history, from one `AwaitUserMessage` execute to the next. */
interface TurnShape {
  executes: number;
  methods: number;
  /** The methods of one turn in order, such as `RunModel.execute` or `ResumeTurn.wait_until`. */
  sequence: string[];
}

async function readTurnShape(bench: SessionBench, sessionId: string): Promise<TurnShape> {
  const history = await bench.client.getStepHistory(sessionId);
  const turnStarts = history.flatMap((entry, index) => (entry.stepType === "AwaitUserMessage" && entry.method === "execute" ? [index] : []));
  const turns: TurnShape[] = [];
  for (let turn = 0; turn + 1 < turnStarts.length; turn++) {
    const entries = history.slice(turnStarts[turn], turnStarts[turn + 1]);
    turns.push({
      executes: entries.filter((entry) => entry.method === "execute").length,
      methods: entries.length,
      sequence: entries.map((entry) => `${entry.stepType}.${entry.method}${entry.status === "completed" ? "" : ` (${entry.status})`}`),
    });
  }
  if (turns.length === 0) throw new Error(`session ${sessionId} has no complete turn in its Step history`);
  return { executes: median(turns.map((turn) => turn.executes)), methods: median(turns.map((turn) => turn.methods)), sequence: turns.at(-1)?.sequence ?? [] };
}

/** Waits until a started session's `AwaitUserMessage` waits, so the first timed turn does not include the session's start. */
async function waitUntilIdle(bench: SessionBench, sessionId: string): Promise<void> {
  for (let tries = 0; tries < 5000; tries++) {
    const description = await bench.client.describe(sessionId);
    if (description.executions.some((execution) => execution.stepType === "AwaitUserMessage" && execution.status === "waiting")) return;
    await sleep(1);
  }
  throw new Error(`session ${sessionId} never reached AwaitUserMessage`);
}

/**
 * Engine overhead of one agent turn with one `read` tool call and a final
 * answer, on one session: `send_user_message`, then AwaitUserMessage →
 * RunModel → CallTool (+ ResumeTurn waiting) → ResumeTurn → RunModel, to the
 * commit that sets `AgentState` back to `waiting_for_user_message`. The
 * model and the tool cost nothing, so every millisecond is the session Flow
 * and the engine under it.
 */
export async function measureTurnOverhead(durability: SqliteDurability, settings: BenchmarkSettings): Promise<ScenarioResult> {
  const turns = durability === "full" ? (settings.quick ? 60 : 300) : (settings.quick ? 300 : 1000);
  const warmUpTurns = settings.quick ? 30 : 100;
  const countingTurns = 20;
  const bench = await openSessionBench(durability);
  try {
    const result = await withTimeLimit(`turn overhead (${durability})`, 90_000, (async () => {
      // Warm-up on its own session, so the timed session starts with an empty transcript.
      await startSession(bench, "warm-up");
      for (let turn = 1; turn <= warmUpTurns; turn++) await runOneTurn(bench, "warm-up", turn);
      // Counting session: the Steps and store transactions of a turn, with the transaction counter in place.
      await startSession(bench, "counting");
      await waitUntilIdle(bench, "counting");
      const counted = await countTransactions(bench.temporary.store, async () => {
        const timings: TurnTiming[] = [];
        for (let turn = 1; turn <= countingTurns; turn++) timings.push(await runOneTurn(bench, "counting", turn));
        return timings;
      });
      const countingReads = counted.result.reduce((sum, timing) => sum + timing.confirmReads, 0);
      const shape = await readTurnShape(bench, "counting");
      // The timed session.
      await startSession(bench, "timed");
      await waitUntilIdle(bench, "timed");
      const timings: TurnTiming[] = [];
      const cpuAtStart = process.cpuUsage();
      const startedAt = performance.now();
      for (let turn = 1; turn <= turns; turn++) timings.push(await runOneTurn(bench, "timed", turn));
      const totalMs = performance.now() - startedAt;
      const cpu = process.cpuUsage(cpuAtStart);
      await checkSessionState(bench, "timed", turns);
      if (bench.runner.toolCalls !== warmUpTurns + countingTurns + turns) throw new Error(`the tool ran ${bench.runner.toolCalls} times for ${warmUpTurns + countingTurns + turns} turns`);
      return {
        timings,
        totalMs,
        cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / turns,
        shape,
        // Transactions of the turn itself: the counter also saw the confirming reads.
        transactionsPerTurn: (counted.transactions - countingReads) / countingTurns,
      };
    })());
    bench.errors.throwIfAny();
    const milliseconds = result.timings.map((timing) => timing.ms);
    const window = Math.min(100, turns);
    const scenario = `turn-overhead ${durability}`;
    const measurements: Measurement[] = [
      {
        scenario,
        metric: "engine overhead per turn (read tool + answer), median",
        value: median(milliseconds),
        unit: "ms",
        note: `${turns} turns on one session after ${warmUpTurns} warm-up turns`,
      },
      { scenario, metric: "engine overhead per turn, p99", value: percentile(milliseconds, 99), unit: "ms" },
      { scenario, metric: "turns per second, one session", value: turns / (result.totalMs / 1000), unit: "turns/s" },
      { scenario, metric: "process CPU (user+sys) per turn", value: result.cpuMsPerTurn, unit: "ms" },
      {
        scenario,
        metric: `median of the first ${window} turns`,
        value: median(milliseconds.slice(0, window)),
        unit: "ms",
        note: `RunModel loads the whole transcript: 4 messages per turn`,
      },
      { scenario, metric: `median of the last ${window} turns`, value: median(milliseconds.slice(-window)), unit: "ms", note: `${4 * (turns - window)}–${4 * turns} stored messages` },
      { scenario, metric: "Step executes per turn", value: result.shape.executes, unit: "Steps/turn", note: "from the Step history" },
      { scenario, metric: "Step methods per turn, with wait_until", value: result.shape.methods, unit: "Steps/turn" },
      { scenario, metric: "store transactions per turn", value: result.transactionsPerTurn, unit: "txns/turn", note: `counted over ${countingTurns} turns, confirming reads excluded` },
      {
        scenario,
        metric: "AgentState reads to confirm a turn ended",
        value: result.timings.reduce((sum, timing) => sum + timing.confirmReads, 0) / turns,
        unit: "reads/turn",
        note: "the measuring cost, inside the times above",
      },
    ];
    return {
      measurements,
      details: {
        durability,
        turns,
        warmUpTurns,
        workerConcurrency: 8,
        totalMs: result.totalMs,
        turnSequence: result.shape.sequence,
        transactionsPerTurn: result.transactionsPerTurn,
        perHundredTurnsMedianMs: Array.from({ length: Math.ceil(turns / 100) }, (_unused, index) => median(milliseconds.slice(index * 100, (index + 1) * 100))),
        turnMs: milliseconds.map((value) => Math.round(value * 1000) / 1000),
      },
    };
  } finally {
    await bench.dispose();
  }
}
