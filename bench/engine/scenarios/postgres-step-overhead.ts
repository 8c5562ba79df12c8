import { Client, Worker, type FlowCore } from "@perdure/engine";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { confirmCompleted, median, WorkerErrorCollector, withTimeLimit } from "../support.ts";
import { benchDatabaseUrl, createBenchmarkPostgresSchema, measureRawCommitMs, skippedResult } from "./postgres-support.ts";

/** Target: engine overhead per Step on PostgreSQL over loopback with synchronous_commit on. */
const stepOverheadTargetMs = 1.5;

interface ChainRun {
  steps: number;
  totalMs: number;
  msPerStep: number;
  cpuMsPerStep: number;
}

async function timeOneChain(client: Client, flow: FlowCore, signals: FinalStepSignals, flowId: string, steps: number): Promise<ChainRun> {
  const finalStepRan = signals.expect(flowId);
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  await client.start(flow, flowId, noopChainInput(steps));
  await finalStepRan;
  await confirmCompleted(client, flowId);
  const totalMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuAtStart);
  return { steps, totalMs, msPerStep: totalMs / steps, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / steps };
}

/**
 * Per-Step engine overhead on PostgreSQL: one flow of no-op Steps, a Worker
 * and a Client in this process, the server over loopback, in a fresh schema.
 */
export async function measurePostgresStepOverhead(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const scenario = "postgres step-overhead";
  const url = benchDatabaseUrl();
  if (url === undefined) return skippedResult(scenario);
  const steps = settings.quick ? 300 : 1000;
  const warmUpSteps = settings.quick ? 100 : 200;
  const repetitions = settings.quick ? 1 : 3;
  const schema = createBenchmarkPostgresSchema(url);
  const errors = new WorkerErrorCollector();
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow("NoopChain", signals);
  let worker: Worker | undefined;
  try {
    const synchronousCommit = await schema.setting("synchronous_commit");
    const rawCommitMs = await measureRawCommitMs(url, schema.schema, settings.quick ? 200 : 1000);
    const store = await schema.open();
    worker = new Worker({ store, flows: [flow], onError: errors.onError });
    const client = new Client({ store });
    await worker.start();
    const runs: ChainRun[] = [];
    await withTimeLimit("postgres step overhead", 120_000, (async () => {
      await timeOneChain(client, flow, signals, "warm-up", warmUpSteps);
      for (let repetition = 0; repetition < repetitions; repetition++) {
        runs.push(await timeOneChain(client, flow, signals, `chain-${repetition}`, steps));
      }
    })());
    errors.throwIfAny();
    const msPerStep = median(runs.map((run) => run.msPerStep));
    const measurements: Measurement[] = [
      {
        scenario,
        metric: "engine overhead per no-op Step",
        value: msPerStep,
        unit: "ms/Step",
        target: { maximum: stepOverheadTargetMs, text: `< ${stepOverheadTargetMs} ms` },
        note: `median of ${runs.length} chain(s) of ${steps} Steps, synchronous_commit=${synchronousCommit}`,
      },
      { scenario, metric: "Steps per second, one flow", value: 1000 / msPerStep, unit: "Steps/s" },
      {
        scenario,
        metric: "process CPU (user+sys) per no-op Step",
        value: median(runs.map((run) => run.cpuMsPerStep)),
        unit: "ms/Step",
        note: `fastest chain: ${Math.min(...runs.map((run) => run.msPerStep)).toFixed(3)} ms/Step wall; server CPU not included`,
      },
      { scenario, metric: "raw INSERT+COMMIT round trip (pg, loopback)", value: rawCommitMs, unit: "ms", note: "median; the floor one durable commit pays" },
    ];
    return { measurements, details: { steps, warmUpSteps, synchronousCommit, rawCommitMs, runs } };
  } finally {
    await worker?.close();
    await schema.dispose();
  }
}
