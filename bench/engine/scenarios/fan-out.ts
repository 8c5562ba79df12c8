import { Client, Worker } from "@perdure/engine";
import { createFanOutFlow, FinalStepSignals } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { confirmCompleted, median, openTemporaryBenchmarkStore, WorkerErrorCollector, withTimeLimit } from "../support.ts";

/**
 * One Step fans out (moveToMany) to 100 parallel Branch Steps that each
 * publish to a Channel; a Join Step waits for exactly 100 messages. Timed
 * from `client.start` to the committed completion after the Join.
 */
export async function measureFanOut(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const width = 100;
  const repetitions = settings.quick ? 3 : 9;
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const errors = new WorkerErrorCollector();
  const signals = new FinalStepSignals();
  const flow = createFanOutFlow("FanOut", signals);
  const worker = new Worker({ store: temporary.store, flows: [flow], onError: errors.onError });
  const client = new Client({ store: temporary.store });
  const runOnce = async (flowId: string): Promise<number> => {
    const joined = signals.expect(flowId);
    const startedAt = performance.now();
    await client.start(flow, flowId, { width });
    await joined;
    await confirmCompleted(client, flowId);
    return performance.now() - startedAt;
  };
  try {
    await worker.start();
    const totalMs: number[] = [];
    await withTimeLimit("fan-out", 60_000, (async () => {
      await runOnce("warm-up");
      for (let repetition = 0; repetition < repetitions; repetition++) totalMs.push(await runOnce(`fan-out-${repetition}`));
    })());
    errors.throwIfAny();
    // Start + 100 Branches + the Join's wait and execute: 103 Step methods.
    const stepMethods = width + 3;
    const measurements: Measurement[] = [
      {
        scenario: "fan-out process-crash-safe",
        metric: `fan-out of ${width} + join (received exactly ${width}), start to completion`,
        value: median(totalMs),
        unit: "ms",
        note: `median of ${totalMs.length}; ${stepMethods} Step methods`,
      },
      { scenario: "fan-out process-crash-safe", metric: "per Step method inside the fan-out", value: median(totalMs) / stepMethods, unit: "ms/Step" },
    ];
    return { measurements, details: { width, totalMs } };
  } finally {
    await worker.close();
    await temporary.dispose();
  }
}
