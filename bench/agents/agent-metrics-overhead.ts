/**
 * What the session metrics cost per Step: one-turn sessions of the
 * benchmark's scripted agent (7 Steps a turn: two model calls, one read
 * tool; the turn counters, the turn duration and the GenAI client
 * histograms recorded) on SQLite (process-crash-safe), run by three sides
 * in this process, each with its own Worker, SQLite file and Flow type:
 *
 * - `off`: the session metrics with no meter provider, what a process
 *   without an OpenTelemetry SDK gets (every call returns at its first
 *   check);
 * - `on`: the session metrics recording into the SDK's `MeterProvider`
 *   with the OpenTelemetry Prometheus exporter as its reader, as
 *   `perdure worker --metrics-port` and `perdure dev --metrics-port` set up;
 * - `control`: a second `off`, whose ratio to `off` is the run's noise floor.
 *
 * The session metrics are one recorder per process (`agentMetrics`), so the
 * sides run one at a time: before each round the recorder is pointed at the
 * provider (`on`) or reset (`off`, `control`). Rounds interleave, the order
 * changing from round to round; the result is the median of the per-round
 * ratios of process CPU and wall time per Step, with a 95 % bootstrap
 * interval, and the load average before and after. The Workers' own metrics
 * get a no-op provider on every side. Nothing collects between rounds;
 * after the last one the `on` side collects once, as a scrape would, and the
 * run fails unless every turn it ran was counted.
 *
 *   cd bench && NODE_OPTIONS=--conditions=perdure-source node agents/agent-metrics-overhead.ts [--rounds=60] [--sessions=20] [--out=file.json]
 *
 * `--profile=on|off` runs only that side, for `node --cpu-prof`.
 *
 * `--loop=turns` times the recording alone: one turn's calls (a turn start,
 * two model calls with usage and a provider's metadata, a turn end) in a
 * loop against the SDK, in CPU microseconds per turn, and the bytes one
 * turn allocates (heap growth over 2,000 turns between two full
 * collections, none during them; run with `node --expose-gc
 * --max-semi-space-size=64`).
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { createNoopMeter } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { createAgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { describeMachine, overheadSummary, threeSideOrders, type OverheadRound } from "../engine/support.ts";
import { BenchScriptedRunner, FinalAnswerSignals } from "./scripted-runner.ts";

/**
 * The process's one session-metrics recorder: the very module the session code loads under
 * `--conditions=perdure-source` (it is not exported). Without that condition the sessions load the built
 * package, this recorder is another one, and the count check at the end fails.
 */
const { agentMetrics } = (await import(new URL("../../packages/agents/src/metrics/agent-metrics.ts", import.meta.url).href)) as {
  agentMetrics: {
    reset(): void;
    useMeterProvider(meterProvider: MeterProvider): void;
    eventWritten(flowType: string, flowId: string, type: string, turnId: string | null, payload: Record<string, unknown>, now: number): void;
    modelCallEnded(measurement: { operationName: string; durationSeconds: number; metadata?: Record<string, unknown>; usage?: Record<string, number> }): void;
  };
};

const { values } = parseArgs({ options: { rounds: { type: "string" }, sessions: { type: "string" }, out: { type: "string" }, profile: { type: "string" }, loop: { type: "string" } } });
const rounds = Number(values.rounds ?? "60");
const sessionCount = Number(values.sessions ?? "20");
const stepsPerTurn = 7;

type RoundResult = OverheadRound;

interface Side {
  /** Points the process's session metrics at this side's provider, or at none. */
  select(): void;
  run(): Promise<RoundResult>;
  close(): Promise<void>;
}

const exporter = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ readers: [exporter] });
const noopMeterProvider = { getMeter: () => createNoopMeter() };

async function openSide(flowType: string, metered: boolean): Promise<Side> {
  const temporary = createTemporarySqliteStore();
  const flow = createAgentSessionFlow(new BenchScriptedRunner(new FinalAnswerSignals()), flowType, { tracing: { isEnabled: false } });
  const worker = new Worker({ store: temporary.store, flows: [flow], concurrency: 8, meterProvider: noopMeterProvider });
  await worker.start();
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  let sessionNumber = 0;
  const select = (): void => {
    agentMetrics.reset();
    if (metered) agentMetrics.useMeterProvider(meterProvider);
  };
  const turns = async (count: number): Promise<RoundResult> => {
    const ids = Array.from({ length: count }, () => `s-${sessionNumber++}`);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const id of ids) await sessions.startSession(id, { initialMessage: `where is order ${id}?` });
    for (const id of ids) await sessions.waitForTurnCount(id, 1, { timeoutMs: 120_000 });
    const wall = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const steps = count * stepsPerTurn;
    return { wallMsPerStep: wall / steps, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / steps };
  };
  select();
  await turns(sessionCount); // JIT, the SQLite page cache, the SDK's aggregation storage
  return {
    select,
    run: () => turns(sessionCount),
    close: async () => {
      await worker.close();
      await temporary.dispose();
    },
  };
}

/** Turns started as the `on` side's collection counts them. */
async function countedTurns(): Promise<number> {
  let total = 0;
  for (const scope of (await exporter.collect()).resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== "perdure.agent.turns.started") continue;
      for (const point of metric.dataPoints) total += point.value as number;
    }
  }
  return total;
}


if (values.loop !== undefined) {
  const loopTurns = Number(values.loop);
  agentMetrics.reset();
  agentMetrics.useMeterProvider(meterProvider);
  const usage = { inputTokens: 1200, outputTokens: 300, totalTokens: 1500, reasoningTokens: 0, cachedInputTokens: 0, requests: 1 };
  const metadata = { providerName: "openai", requestModel: "gpt-4o", responseModel: "gpt-4o-2024-08-06" };
  const oneTurn = (index: number): void => {
    const flowId = `loop-${index % 64}`;
    const turnId = `turn-${index}`;
    agentMetrics.eventWritten("LoopAgent", flowId, "turn_started", turnId, {}, index);
    agentMetrics.modelCallEnded({ operationName: "chat", durationSeconds: 0.8, metadata, usage });
    agentMetrics.modelCallEnded({ operationName: "chat", durationSeconds: 1.1, metadata, usage });
    agentMetrics.eventWritten("LoopAgent", flowId, "turn_completed", turnId, {}, index + 2000);
  };
  for (let index = 0; index < 20_000; index++) oneTurn(index);
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < loopTurns; index++) oneTurn(index);
  const cpu = process.cpuUsage(cpuBefore);
  const collect = (globalThis as { gc?: () => void }).gc;
  let bytesPerTurn: number | undefined;
  if (collect !== undefined) {
    const { PerformanceObserver } = await import("node:perf_hooks");
    let collections = 0;
    const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
    observer.observe({ entryTypes: ["gc"] });
    collect();
    await new Promise((resolve) => setTimeout(resolve, 50));
    collections = 0;
    const heapBefore = process.memoryUsage().heapUsed;
    for (let index = 0; index < 2000; index++) oneTurn(index);
    const heapAfter = process.memoryUsage().heapUsed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    bytesPerTurn = collections === 0 ? Math.round((heapAfter - heapBefore) / 2000) : undefined;
  }
  console.log(JSON.stringify({ turns: loopTurns, cpuMicrosecondsPerTurn: Number(((cpu.user + cpu.system) / loopTurns).toFixed(2)), bytesPerTurn: bytesPerTurn ?? "a collection ran during the count" }));
  await meterProvider.shutdown();
  process.exit(0);
}

if (values.profile === "on" || values.profile === "off") {
  const side = await openSide("MeteredBenchAgentProfile", values.profile === "on");
  for (let round = 0; round < rounds; round++) await side.run();
  await side.close();
  await meterProvider.shutdown();
  process.exit(0);
}

const loadBefore = loadavg();
const sides = [await openSide("MeteredBenchAgentOff", false), await openSide("MeteredBenchAgentOn", true), await openSide("MeteredBenchAgentControl", false)];
const runs: RoundResult[][] = [[], [], []];
try {
  for (let round = 0; round < rounds; round++) {
    for (const index of threeSideOrders[round % threeSideOrders.length] ?? [0, 1, 2]) {
      const side = sides[index];
      side?.select();
      const run = await side?.run();
      if (run !== undefined) runs[index]?.push(run);
    }
  }
  sides[1]?.select();
  const counted = await countedTurns();
  if (counted !== (rounds + 1) * sessionCount) throw new Error(`the session metrics counted ${counted} turns started; the on side ran ${(rounds + 1) * sessionCount}`);
} finally {
  for (const side of sides) await side.close();
  await meterProvider.shutdown();
}
const loadAfter = loadavg();
const [offRuns = [], onRuns = [], controlRuns = []] = runs;
const result = {
  rounds,
  sessionsPerRound: sessionCount,
  stepsPerTurn,
  loadAverageBefore: loadBefore.map((load) => Number(load.toFixed(2))),
  loadAverageAfter: loadAfter.map((load) => Number(load.toFixed(2))),
  machine: describeMachine(),
  processCpu: overheadSummary({ off: offRuns, on: onRuns, control: controlRuns }, "cpuMsPerStep"),
  wall: overheadSummary({ off: offRuns, on: onRuns, control: controlRuns }, "wallMsPerStep"),
};
console.log(JSON.stringify(result));
if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify({ ...result, runs: { off: offRuns, on: onRuns, control: controlRuns } }, null, 2)}\n`);
