/**
 * The long-session scenario: one Stepwise session on the scripted model runs
 * 2,000 turns, each with a `read` tool call and an answer, under a
 * compaction policy and the default retention (1,000 messages). For every
 * turn it records the wall and CPU time, the store rows read and whether
 * the turn compacted; every 50 turns, the store's size. The target: the
 * median turn of 1,901–2,000 within 1.1× of the median of 101–200, and a
 * store whose size retention bounds. Inside each of those two ranges a fresh
 * reference session takes a turn after every turn, so the ratio can also be
 * read against the machine's load at the time.
 */
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, Worker, type Store } from "@perdure/engine";
import { benchDirectory } from "../../engine/cli.ts";
import { mebibyte, median, openTemporaryBenchmarkStore, withTimeLimit, WorkerErrorCollector, type BenchmarkSettings, type Measurement, type ScenarioResult } from "../../engine/support.ts";
import { FinalAnswerSignals } from "../scripted-runner.ts";
import { percentile } from "../session-bench.ts";
import { createLongSessionFlow, longSessionCompaction } from "./long-session-agent.ts";
import { writeLongSessionPlot } from "./long-session-plot-file.ts";
import { installRowReadCounter, readRowReadCounts, rowReadsBetween, type RowReadCounts } from "./row-read-counter.ts";
import { readPostgresStoreFootprint, readStoreFootprint, type StoreFootprint } from "./store-footprint.ts";
import { startBenchPostgres } from "../../peers/bench-postgres.ts";
import { createBenchmarkPostgresSchema } from "../../engine/scenarios/postgres-support.ts";
import { runTimedTurn, type TurnTime } from "./timed-turn.ts";

const sessionId = "long";
/** Where the plots go, relative to bench/; each SVG is written beside its PNG. */
export const longSessionPlotPaths = { compacting: "results/long-session.png", baseline: "results/long-session-without-compaction.png", postgres: "results/long-session-postgres.png" };
const footprintEveryTurns = 50;
const targetRatio = 1.1;

/** 2,000 turns, 400 with `--quick`, or `PERDURE_BENCH_LONG_TURNS` (at least 200), such as 3,000 to see the events stream reach its byte budget. */
function longSessionTurns(settings: BenchmarkSettings): number {
  const configured = process.env.PERDURE_BENCH_LONG_TURNS;
  if (configured === undefined || configured === "") return settings.quick ? 400 : 2000;
  const turns = Number(configured);
  if (!Number.isSafeInteger(turns) || turns < 200) throw new Error(`PERDURE_BENCH_LONG_TURNS=${configured} is invalid: use a whole number of turns, at least 200`);
  return turns;
}

/**
 * A fresh session whose turns interleave with the long session's inside one
 * compared range. Both references do the same work (the first turns of a
 * new session, as many as the range has), so a difference between them is
 * the machine, not the session:
 * other processes on shared cores shift turn times by tens of percent for
 * hundreds of turns at a time.
 */
interface ReferenceSession {
  sessionId: string;
  range: [number, number];
  times: TurnTime[];
}

/** One turn as measured. */
interface TurnRecord extends TurnTime {
  reads: RowReadCounts;
  compacted: boolean;
}

/** The compared ranges, 1-based and inclusive: 101–200 and 1,901–2,000 of 2,000 turns (scaled for other lengths). */
function comparedRanges(turns: number): { early: [number, number]; late: [number, number] } {
  return { early: [Math.floor(turns * 0.05) + 1, Math.floor(turns * 0.1)], late: [Math.floor(turns * 0.95) + 1, turns] };
}

function inRange<TValue>(values: readonly TValue[], [first, last]: [number, number]): TValue[] {
  return values.slice(first - 1, last);
}

async function waitUntilAwaitingMessage(client: Client, flowId: string): Promise<void> {
  for (let tries = 0; tries < 5000; tries++) {
    const description = await client.describe(flowId);
    if (description.executions.some((execution) => execution.stepType === "AwaitUserMessage" && execution.status === "waiting")) return;
    await sleep(1);
  }
  throw new Error(`session ${flowId} never reached AwaitUserMessage`);
}

function storeBytes(footprint: StoreFootprint): number {
  return footprint.databaseBytes + footprint.walBytes;
}

/**
 * Runs the session and returns the table rows and the raw per-turn samples;
 * draws the plot. `compaction: false` is the baseline: the same session
 * with no compaction policy, so no retention either.
 */
/** The session's store: SQLite (process-crash-safe) by default, or a fresh schema on a PostgreSQL server the bench starts. */
interface LongSessionStore {
  store: Store;
  footprint(): Promise<StoreFootprint>;
  dispose(): Promise<void>;
}

async function openLongSessionStore(kind: "sqlite" | "postgres"): Promise<LongSessionStore> {
  if (kind === "sqlite") {
    const temporary = openTemporaryBenchmarkStore("process-crash-safe");
    return { store: temporary.store, footprint: () => Promise.resolve(readStoreFootprint(temporary.path)), dispose: () => temporary.dispose() };
  }
  const postgres = startBenchPostgres();
  try {
    const schema = createBenchmarkPostgresSchema(postgres.connectionString);
    const store = await schema.open({ poolSize: 12 });
    return {
      store,
      footprint: () => readPostgresStoreFootprint(postgres.connectionString, schema.schema),
      async dispose() {
        try {
          await schema.dispose();
        } finally {
          postgres.stop();
        }
      },
    };
  } catch (error) {
    postgres.stop();
    throw error;
  }
}

export async function measureLongSession(settings: BenchmarkSettings, options: { compaction: boolean; store?: "sqlite" | "postgres" }): Promise<ScenarioResult> {
  const turns = longSessionTurns(settings);
  // The row counter counts SQLite rows; on PostgreSQL its counts stay 0.
  installRowReadCounter();
  const temporary = await openLongSessionStore(options.store ?? "sqlite");
  const signals = new FinalAnswerSignals();
  const { flow, counters } = createLongSessionFlow(signals, options);
  const errors = new WorkerErrorCollector();
  const worker = new Worker({ store: temporary.store, flows: [flow], concurrency: 8, onError: errors.onError });
  const client = new Client({ store: temporary.store });
  await worker.start();
  try {
    const records: TurnRecord[] = [];
    const timing = { client, flow, signals };
    const ranges = comparedRanges(turns);
    const references: ReferenceSession[] = [
      { sessionId: "reference-early", range: ranges.early, times: [] },
      { sessionId: "reference-late", range: ranges.late, times: [] },
    ];
    const footprints: { turn: number; footprint: StoreFootprint }[] = [];
    const totalMs = await withTimeLimit("long session", 30 * 60_000, (async () => {
      await client.start(flow, sessionId, {});
      await waitUntilAwaitingMessage(client, sessionId);
      footprints.push({ turn: 0, footprint: await temporary.footprint() });
      const startedAt = performance.now();
      for (let turn = 1; turn <= turns; turn++) {
        const summariesBefore = counters.summaryCalls;
        const readsBefore = readRowReadCounts();
        const time = await runTimedTurn(timing, sessionId, turn);
        records.push({ ...time, reads: rowReadsBetween(readsBefore, readRowReadCounts()), compacted: counters.summaryCalls > summariesBefore });
        // Inside a compared range, a fresh reference session's turn follows each turn, so both see the same load on the machine.
        for (const reference of references) {
          if (turn < reference.range[0] || turn > reference.range[1]) continue;
          if (turn === reference.range[0]) {
            await client.start(flow, reference.sessionId, {});
            await waitUntilAwaitingMessage(client, reference.sessionId);
          }
          reference.times.push(await runTimedTurn(timing, reference.sessionId, turn - reference.range[0] + 1));
        }
        errors.throwIfAny();
        if (turn % footprintEveryTurns === 0) footprints.push({ turn, footprint: await temporary.footprint() });
      }
      const elapsedMs = performance.now() - startedAt;
      if (turns % footprintEveryTurns !== 0) footprints.push({ turn: turns, footprint: await temporary.footprint() });
      return elapsedMs;
    })());
    errors.throwIfAny();

    // The run is only worth its numbers if the session did what it claims.
    const [state] = await client.getAttributes(sessionId, flow.agentState);
    if (state?.turnCount !== turns || state.messageCount !== 4 * turns || state.lastTurnError !== null || state.activeTurnId !== null) {
      throw new Error(`after ${turns} turns the session's state is ${JSON.stringify(state)}`);
    }
    const referenceTurns = references.reduce((sum, reference) => sum + reference.times.length, 0);
    if (counters.toolRuns !== turns + referenceTurns) throw new Error(`the tool ran ${counters.toolRuns} times in ${turns} + ${referenceTurns} reference turns`);
    const [index] = await client.getAttributes(sessionId, flow.agentMessageIndex);
    const [summary] = await client.getAttributes(sessionId, flow.contextSummary);
    if (index === undefined) throw new Error("the session never rolled its window over");
    if (options.compaction !== (summary !== undefined)) throw new Error(`the session ${summary === undefined ? "never compacted" : "compacted without a policy"}`);
    const storedMessages = state.messageCount - index.firstSequence + 1;

    const milliseconds = records.map((record) => record.ms);
    const [earlyReference, lateReference] = references.map((reference) => median(reference.times.map((time) => time.ms))) as [number, number];
    const earlyMedian = median(inRange(milliseconds, ranges.early));
    const lateMedian = median(inRange(milliseconds, ranges.late));
    const plainMs = (range: [number, number]) => median(inRange(records, range).filter((record) => !record.compacted).map((record) => record.ms));
    const attributeRows = records.map((record) => record.reads.attributeRows);
    const last = footprints.at(-1)?.footprint;
    const afterRetention = footprints.find((sample) => sample.turn >= 400)?.footprint;
    const compactingTurns = records.flatMap((record, offset) => (record.compacted ? [offset + 1] : []));
    const scenario = options.store === "postgres" ? "long-session-postgres" : options.compaction ? "long-session" : "no-compaction-baseline";
    const cpuMedian = (range: [number, number]) => median(inRange(records, range).map((record) => record.cpuMs));
    const rangeText = (range: [number, number]) => `turns ${range[0].toLocaleString("en-US")}–${range[1].toLocaleString("en-US")}`;
    const measurements: Measurement[] = [
      { scenario, metric: `median turn, ${rangeText(ranges.early)}`, value: earlyMedian, unit: "ms", note: "send_user_message to the committed end of the turn; read tool + answer" },
      { scenario, metric: `median turn, ${rangeText(ranges.late)}`, value: lateMedian, unit: "ms" },
      {
        scenario,
        metric: "late median / early median",
        value: lateMedian / earlyMedian,
        unit: "×",
        target: { maximum: targetRatio, text: `≤ ${targetRatio}×` },
        note: `without the compacting turns: ${plainMs(ranges.early).toFixed(2)} → ${plainMs(ranges.late).toFixed(2)} ms`,
      },
      {
        scenario,
        metric: "late/early ratio against fresh reference sessions",
        value: (lateMedian / lateReference) / (earlyMedian / earlyReference),
        unit: "×",
        target: { maximum: targetRatio, text: `≤ ${targetRatio}×` },
        note: `each range's median over the median of a fresh session's turns 1–${ranges.early[1] - ranges.early[0] + 1} run between its turns: ${earlyReference.toFixed(2)} and ${lateReference.toFixed(2)} ms`,
      },
      { scenario, metric: `median process CPU per turn, ${rangeText(ranges.early)}`, value: cpuMedian(ranges.early), unit: "ms", note: "less sensitive than wall time to other processes on the cores" },
      { scenario, metric: `median process CPU per turn, ${rangeText(ranges.late)}`, value: cpuMedian(ranges.late), unit: "ms", note: `ratio ${(cpuMedian(ranges.late) / cpuMedian(ranges.early)).toFixed(2)}` },
      { scenario, metric: "p99 turn, whole run", value: percentile(milliseconds, 99), unit: "ms" },
      { scenario, metric: "compacting turns", value: compactingTurns.length, unit: "turns", note: `one CompactContext each; ${counters.summaryCalls} summaries` },
      { scenario, metric: `store rows read per turn, median of ${rangeText(ranges.early)}`, value: median(inRange(records, ranges.early).map((record) => record.reads.rows)), unit: "rows/turn", note: "every table: claims, loads, waits, the confirming AgentState read" },
      { scenario, metric: `store rows read per turn, median of ${rangeText(ranges.late)}`, value: median(inRange(records, ranges.late).map((record) => record.reads.rows)), unit: "rows/turn" },
      { scenario, metric: `attribute rows read per turn, median of ${rangeText(ranges.early)}`, value: median(inRange(attributeRows, ranges.early)), unit: "rows/turn", note: `${(median(inRange(records, ranges.early).map((record) => record.reads.attributeValueBytes)) / 1024).toFixed(0)} KiB of values` },
      { scenario, metric: `attribute rows read per turn, median of ${rangeText(ranges.late)}`, value: median(inRange(attributeRows, ranges.late)), unit: "rows/turn", note: `${(median(inRange(records, ranges.late).map((record) => record.reads.attributeValueBytes)) / 1024).toFixed(0)} KiB of values` },
      { scenario, metric: "stored messages at the end", value: storedMessages, unit: "messages", note: `of ${state.messageCount}; ${index.chunks.length} chunks, window from ${index.windowFirstSequence}, deleted before ${index.firstSequence}` },
      {
        scenario,
        metric: "store size at turn 400 (db + WAL)",
        value: afterRetention === undefined ? Number.NaN : storeBytes(afterRetention) / mebibyte,
        unit: "MiB",
        note: afterRetention === undefined ? "" : `attributes ${((afterRetention.tableBytes.attributes ?? 0) / mebibyte).toFixed(2)} MiB, events stream ${((afterRetention.tableBytes.stream_messages ?? 0) / mebibyte).toFixed(2)} MiB`,
      },
      {
        scenario,
        metric: `store size at turn ${turns.toLocaleString("en-US")} (db + WAL)`,
        value: last === undefined ? Number.NaN : storeBytes(last) / mebibyte,
        unit: "MiB",
        note: last === undefined ? "" : `attributes ${((last.tableBytes.attributes ?? 0) / mebibyte).toFixed(2)} MiB, events stream ${((last.tableBytes.stream_messages ?? 0) / mebibyte).toFixed(2)} MiB (${(last.streamValueBytes / mebibyte).toFixed(2)} MiB of event values; budget 10 MiB), free pages ${(last.freeBytes / mebibyte).toFixed(2)} MiB`,
      },
    ];

    const relativePlotPath = options.store === "postgres" ? longSessionPlotPaths.postgres : options.compaction ? longSessionPlotPaths.compacting : longSessionPlotPaths.baseline;

    const details = {
      turns,
      totalMs,
      compaction: options.compaction ? longSessionCompaction : null,
      plot: relativePlotPath,
      comparedRanges: ranges,
      compactingTurns,
      referenceTurnMs: Object.fromEntries(references.map((reference) => [reference.sessionId, reference.times.map((time) => Math.round(time.ms * 1000) / 1000)])),
      messageIndex: { chunks: index.chunks.length, firstSequence: index.firstSequence, windowFirstSequence: index.windowFirstSequence },
      summary: summary === undefined ? null : { generation: summary.generation, lastSequence: summary.lastSequence },
      perHundredTurnsMedianMs: Array.from({ length: Math.ceil(turns / 100) }, (_unused, hundred) => median(milliseconds.slice(hundred * 100, (hundred + 1) * 100))),
      footprints,
      turnMs: milliseconds.map((value) => Math.round(value * 1000) / 1000),
      turnCpuMs: records.map((record) => Math.round(record.cpuMs * 1000) / 1000),
      rowsRead: records.map((record) => record.reads.rows),
      attributeRowsRead: attributeRows,
      attributeValueBytesRead: records.map((record) => record.reads.attributeValueBytes),
    };
    await writeLongSessionPlot(details, resolve(benchDirectory, relativePlotPath));
    return { measurements, details };
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}
