import { Client, Worker, type FlowCore } from "@perdure/engine";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { confirmCompleted, median, openTemporaryBenchmarkStore, WorkerErrorCollector, withTimeLimit } from "../support.ts";

/** Targets from the issue: engine overhead per Step on SQLite. */
const stepOverheadTargetMs: Record<SqliteDurability, number> = { "process-crash-safe": 0.15, full: 1 };

interface ChainRun {
  steps: number;
  totalMs: number;
  msPerStep: number;
  /** User + system CPU of the whole process per Step: less disturbed than wall time when other processes share the cores. */
  cpuMsPerStep: number;
}

/** Starts one no-op chain and times it from `client.start` to its committed completion. */
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
 * Per-Step engine overhead: one flow, a Step that moves to itself, so every
 * Step is one claim transaction plus one commit transaction and nothing else.
 */
export async function measureStepOverhead(durability: SqliteDurability, settings: BenchmarkSettings): Promise<ScenarioResult> {
  const steps = durability === "full" ? (settings.quick ? 300 : 2000) : (settings.quick ? 1000 : 5000);
  const warmUpSteps = settings.quick ? 200 : 500;
  const repetitions = settings.quick ? 1 : durability === "full" ? 3 : 5;
  const temporary = openTemporaryBenchmarkStore(durability);
  const errors = new WorkerErrorCollector();
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow("NoopChain", signals);
  const worker = new Worker({ store: temporary.store, flows: [flow], onError: errors.onError });
  const client = new Client({ store: temporary.store });
  try {
    await worker.start();
    const runs: ChainRun[] = [];
    await withTimeLimit(`step overhead (${durability})`, 60_000, (async () => {
      await timeOneChain(client, flow, signals, "warm-up", warmUpSteps);
      for (let repetition = 0; repetition < repetitions; repetition++) {
        runs.push(await timeOneChain(client, flow, signals, `chain-${repetition}`, steps));
      }
    })());
    errors.throwIfAny();
    const msPerStep = median(runs.map((run) => run.msPerStep));
    const scenario = `step-overhead ${durability}`;
    const measurements: Measurement[] = [
      {
        scenario,
        metric: "engine overhead per no-op Step",
        value: msPerStep,
        unit: "ms/Step",
        target: { maximum: stepOverheadTargetMs[durability], text: `< ${stepOverheadTargetMs[durability]} ms` },
        note: `median of ${runs.length} chain(s) of ${steps} Steps`,
      },
      { scenario, metric: "Steps per second, one flow", value: 1000 / msPerStep, unit: "Steps/s" },
      {
        scenario,
        metric: "process CPU (user+sys) per no-op Step",
        value: median(runs.map((run) => run.cpuMsPerStep)),
        unit: "ms/Step",
        note: `fastest chain: ${Math.min(...runs.map((run) => run.msPerStep)).toFixed(3)} ms/Step wall`,
      },
    ];
    return { measurements, details: { durability, steps, warmUpSteps, runs } };
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}
