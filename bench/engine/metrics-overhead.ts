/**
 * What the Worker's metrics cost per Step: a no-op Step chain on SQLite
 * (process-crash-safe), with no MeterProvider (the OpenTelemetry API's
 * no-op) and with the SDK's MeterProvider recording every instrument, in
 * alternating rounds in one process so that machine load hits both alike.
 *
 *   node bench/engine/metrics-overhead.ts [--rounds=6] [--steps=2000]
 */
import { parseArgs } from "node:util";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { Client, Worker, type WorkerOptions } from "@perdure/engine";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "./flows.ts";
import { confirmCompleted, median, openTemporaryBenchmarkStore } from "./support.ts";

/** A reader that is never scraped: recording is what is measured. */
class IdleReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const { values } = parseArgs({ options: { rounds: { type: "string" }, steps: { type: "string" } } });
const rounds = Number(values.rounds ?? "6");
const steps = Number(values.steps ?? "2000");

/** Milliseconds per Step of one chain on a fresh store and Worker. */
async function chainMsPerStep(meterProvider: MeterProvider | undefined, flowId: string): Promise<{ wall: number; cpu: number }> {
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow("NoopChain", signals);
  const options: WorkerOptions = { store: temporary.store, flows: [flow], ...(meterProvider === undefined ? {} : { meterProvider }) };
  const worker = new Worker(options);
  const client = new Client({ store: temporary.store });
  try {
    await worker.start();
    const warmUp = signals.expect("warm-up");
    await client.start(flow, "warm-up", noopChainInput(300));
    await warmUp;
    const finished = signals.expect(flowId);
    const cpuAtStart = process.cpuUsage();
    const startedAt = performance.now();
    await client.start(flow, flowId, noopChainInput(steps));
    await finished;
    await confirmCompleted(client, flowId);
    const cpu = process.cpuUsage(cpuAtStart);
    return { wall: (performance.now() - startedAt) / steps, cpu: (cpu.user + cpu.system) / 1000 / steps };
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}

const off: Array<{ wall: number; cpu: number }> = [];
const on: Array<{ wall: number; cpu: number }> = [];
for (let round = 0; round < rounds; round++) {
  off.push(await chainMsPerStep(undefined, `off-${round}`));
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  on.push(await chainMsPerStep(meterProvider, `on-${round}`));
  await meterProvider.shutdown();
}
const summary = (kind: "wall" | "cpu") => {
  const offMedian = median(off.map((run) => run[kind]));
  const onMedian = median(on.map((run) => run[kind]));
  return { offMedianMsPerStep: Number(offMedian.toFixed(4)), onMedianMsPerStep: Number(onMedian.toFixed(4)), overheadPercent: Number((((onMedian - offMedian) / offMedian) * 100).toFixed(2)) };
};
console.log(JSON.stringify({ rounds, steps, wall: summary("wall"), processCpu: summary("cpu") }, null, 2));
