import { Client, Worker } from "@perdure/engine";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { confirmCompleted, median, openTemporaryBenchmarkStore, WorkerErrorCollector, withTimeLimit } from "../support.ts";

interface ConcurrentRun {
  flows: number;
  stepsPerFlow: number;
  totalSteps: number;
  totalMs: number;
  stepsPerSecond: number;
}

/**
 * Steps per second with several no-op chains running at once on one Worker
 * (concurrency 8, the default): the same total number of Steps, split over
 * 1, 8 or 64 flows, timed from the first start to the last completion.
 */
export async function measureConcurrentFlows(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const totalSteps = settings.quick ? 1024 : 6400;
  const repetitions = settings.quick ? 1 : 3;
  const flowCounts = [1, 8, 64];
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const errors = new WorkerErrorCollector();
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow("NoopChain", signals);
  const worker = new Worker({ store: temporary.store, flows: [flow], onError: errors.onError });
  const client = new Client({ store: temporary.store });
  let runNumber = 0;
  const runOnce = async (flows: number, stepsPerFlow: number): Promise<ConcurrentRun> => {
    runNumber++;
    const flowIds = Array.from({ length: flows }, (_unused, index) => `run-${runNumber}-flow-${index}`);
    const finalStepsRan = flowIds.map((flowId) => signals.expect(flowId));
    const startedAt = performance.now();
    await Promise.all(flowIds.map((flowId) => client.start(flow, flowId, noopChainInput(stepsPerFlow))));
    await Promise.all(finalStepsRan);
    await Promise.all(flowIds.map((flowId) => confirmCompleted(client, flowId)));
    const totalMs = performance.now() - startedAt;
    return { flows, stepsPerFlow, totalSteps: flows * stepsPerFlow, totalMs, stepsPerSecond: (flows * stepsPerFlow) / (totalMs / 1000) };
  };
  try {
    await worker.start();
    const runs: ConcurrentRun[] = [];
    await withTimeLimit("concurrent flows", 90_000, (async () => {
      await runOnce(8, 50);
      for (let repetition = 0; repetition < repetitions; repetition++) {
        for (const flows of flowCounts) runs.push(await runOnce(flows, Math.ceil(totalSteps / flows)));
      }
    })());
    errors.throwIfAny();
    const measurements: Measurement[] = flowCounts.map((flows) => {
      const matching = runs.filter((run) => run.flows === flows);
      return {
        scenario: "concurrency process-crash-safe",
        metric: `Steps/s with ${flows} concurrent flow(s), Worker concurrency 8`,
        value: median(matching.map((run) => run.stepsPerSecond)),
        unit: "Steps/s",
        note: `${matching[0]?.stepsPerFlow ?? 0} Steps per flow, median of ${matching.length}`,
      };
    });
    return { measurements, details: { totalSteps, workerConcurrency: 8, runs } };
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}
