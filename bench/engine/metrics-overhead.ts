/**
 * What the Worker's metrics cost per Step, end to end: the engine
 * benchmark's no-op Step chain on SQLite (process-crash-safe), run by two
 * Workers that differ only in metrics.
 *
 * - `off`: no meter provider, what a user without an OpenTelemetry SDK
 *   gets (the Worker's metrics return at their first check).
 * - `on`: what `perdure worker --metrics-port` sets up
 *   (packages/cli/src/operations/prometheus-metrics.ts): the SDK's
 *   MeterProvider with the OpenTelemetry Prometheus exporter as its reader.
 *
 * They run in interleaved rounds, one at a time, the order changing from
 * round to round, and the result is the median of the per-round ratios of
 * process CPU and wall time per Step, with the load average before and after.
 * Nothing collects between rounds: the histogram samples a Worker keeps for
 * the next collection are recorded when their buffer fills, inside the
 * timed rounds, so that cost is measured; a scrape's own cost is per scrape,
 * not per Step. After the last round the `on` side collects once, as a
 * scrape would, and the run fails unless every Step it ran was counted.
 *
 * `--isolation=worker` (the default) runs both Workers in this process, each
 * on its own SQLite file, the `on` one given the provider as `meterProvider`
 * (the meter the global registration would hand it), so rounds can be short
 * and finely interleaved. `--isolation=process` runs each in its own child
 * process with the provider registered globally exactly as the CLI does.
 * Each round also runs `control`, a second Worker without metrics: its
 * ratio to `off` is the run's noise floor. Each median comes with a 95 %
 * bootstrap interval.
 *
 *   npm run bench:metrics --workspace bench -- [--rounds=300] [--steps=200] [--isolation=worker|process] [--out=file.json]
 */
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { MeterProvider as ApiMeterProvider } from "@opentelemetry/api";
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { Client, Worker } from "@perdure/engine";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "./flows.ts";
import { confirmCompleted, describeMachine, openTemporaryBenchmarkStore, overheadSummary, threeSideOrders, type OverheadRound } from "./support.ts";

type Mode = "off" | "on";

/** One timed chain. */
type RoundResult = OverheadRound;

/** One side of the comparison. */
interface Side {
  run(): Promise<RoundResult>;
  /** Steps the metrics counted as committed so far (collects once); undefined without metrics. */
  counted(): Promise<number | undefined>;
  close(): Promise<void>;
}

const { values } = parseArgs({
  options: {
    rounds: { type: "string" },
    steps: { type: "string" },
    isolation: { type: "string" },
    out: { type: "string" },
    child: { type: "string" },
  },
});
const steps = Number(values.steps ?? "200");
const warmUpSteps = 300;

/** Sums the committed-Steps counter in one collection. */
function committedCount(resourceMetrics: ResourceMetrics): number {
  let total = 0;
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== "perdure.step.committed") continue;
      for (const point of metric.dataPoints) total += point.value as number;
    }
  }
  return total;
}

/** The Prometheus pipeline of `perdure worker --metrics-port`; `global` registers it as the CLI does. */
async function prometheusPipeline(global: boolean): Promise<{ meterProvider: ApiMeterProvider; committed: () => Promise<number>; shutdown: () => Promise<void> }> {
  const { metrics } = await import("@opentelemetry/api");
  const { PrometheusExporter } = await import("@opentelemetry/exporter-prometheus");
  const { MeterProvider } = await import("@opentelemetry/sdk-metrics");
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  if (global) metrics.setGlobalMeterProvider(meterProvider);
  return { meterProvider, committed: async () => committedCount((await exporter.collect()).resourceMetrics), shutdown: () => meterProvider.shutdown() };
}

/** A Worker and a Client on a fresh SQLite file, running chains of no-op Steps one at a time. */
async function openSide(flowType: string, meterProvider: ApiMeterProvider | undefined, committed: (() => Promise<number>) | undefined): Promise<Side> {
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow(flowType, signals);
  const worker = new Worker({ store: temporary.store, flows: [flow], ...(meterProvider === undefined ? {} : { meterProvider }) });
  const client = new Client({ store: temporary.store });
  await worker.start();
  let flowCount = 0;
  const chain = async (stepCount: number): Promise<RoundResult> => {
    const flowId = `chain-${flowCount++}`;
    const finished = signals.expect(flowId);
    const cpuAtStart = process.cpuUsage();
    const startedAt = performance.now();
    await client.start(flow, flowId, noopChainInput(stepCount));
    await finished;
    await confirmCompleted(client, flowId);
    const wall = performance.now() - startedAt;
    const cpu = process.cpuUsage(cpuAtStart);
    return { wallMsPerStep: wall / stepCount, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / stepCount };
  };
  await chain(warmUpSteps); // JIT, the SQLite page cache, the SDK's aggregation storage
  return {
    run: () => chain(steps),
    counted: async () => committed?.(),
    close: async () => {
      await worker.close();
      await temporary.dispose();
    },
  };
}

/** A side in a child process, which registers the pipeline globally as the CLI does. */
async function runChild(mode: Mode): Promise<void> {
  const pipeline = mode === "on" ? await prometheusPipeline(true) : undefined;
  // No meterProvider option: the Worker finds the global provider, as `perdure worker` does.
  const side = await openSide("NoopChain", undefined, pipeline?.committed);
  process.on("message", (message: { do: "run" | "counted" | "close" }) => {
    const reply = (value: unknown) => process.send?.({ value });
    if (message.do === "run") void side.run().then(reply);
    if (message.do === "counted") void side.counted().then(reply);
    if (message.do === "close") void side.close().then(() => pipeline?.shutdown()).then(() => process.exit(0));
  });
  process.send?.({ value: "ready" });
}

async function childSide(mode: Mode): Promise<Side> {
  const child = fork(fileURLToPath(import.meta.url), [`--child=${mode}`, `--steps=${steps}`], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ask = (what?: "run" | "counted" | "close"): Promise<unknown> => new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the ${mode} child exited with ${code}`));
    child.once("exit", onExit);
    child.once("message", (message: { value: unknown }) => {
      child.off("exit", onExit);
      resolve(message.value);
    });
    if (what !== undefined) child.send({ do: what });
  });
  await ask();
  return {
    run: async () => (await ask("run")) as RoundResult,
    counted: async () => (await ask("counted")) as number | undefined,
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ do: "close" });
      await exited;
    },
  };
}


async function runParent(): Promise<void> {
  const rounds = Number(values.rounds ?? "300");
  const isolation = values.isolation === "process" ? "process" : "worker";
  const loadBefore = loadavg();
  const pipeline = isolation === "worker" ? await prometheusPipeline(false) : undefined;
  // `control` is a second Worker without metrics: its ratio to `off` is this run's noise floor.
  const off = isolation === "process" ? await childSide("off") : await openSide("NoopChainOff", undefined, undefined);
  const on = isolation === "process" ? await childSide("on") : await openSide("NoopChainOn", pipeline?.meterProvider, pipeline?.committed);
  const control = isolation === "process" ? await childSide("off") : await openSide("NoopChainControl", undefined, undefined);
  const sides = [off, on, control];
  const runs: RoundResult[][] = [[], [], []];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const index of threeSideOrders[round % threeSideOrders.length] ?? [0, 1, 2]) {
        const side = sides[index];
        const run = await side?.run();
        if (run !== undefined) runs[index]?.push(run);
      }
    }
    const counted = await on.counted();
    const expected = warmUpSteps + rounds * steps;
    if (counted !== expected) throw new Error(`the metrics counted ${counted} committed Steps; the Worker ran ${expected}`);
  } finally {
    for (const side of sides) await side.close();
    await pipeline?.shutdown();
  }
  const loadAfter = loadavg();
  const [offRuns = [], onRuns = [], controlRuns = []] = runs;
  const result = {
    isolation,
    rounds,
    stepsPerRound: steps,
    loadAverageBefore: loadBefore.map((load) => Number(load.toFixed(2))),
    loadAverageAfter: loadAfter.map((load) => Number(load.toFixed(2))),
    machine: describeMachine(),
    processCpu: overheadSummary({ off: offRuns, on: onRuns, control: controlRuns }, "cpuMsPerStep"),
    wall: overheadSummary({ off: offRuns, on: onRuns, control: controlRuns }, "wallMsPerStep"),
  };
  console.log(JSON.stringify(result));
  if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify({ ...result, runs: { off: offRuns, on: onRuns, control: controlRuns } }, null, 2)}\n`);
}

if (values.child === "off" || values.child === "on") await runChild(values.child);
else await runParent();
