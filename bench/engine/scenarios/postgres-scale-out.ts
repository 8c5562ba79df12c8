import { type ChildProcess, fork } from "node:child_process";
import { loadavg } from "node:os";
import { Client } from "@perdure/engine";
import { createNoopChainFlow, FinalStepSignals, noopChainInput } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { confirmCompleted, median, withTimeLimit } from "../support.ts";
import { benchDatabaseUrl, createBenchmarkPostgresSchema, skippedResult } from "./postgres-support.ts";
import type { PostgresWorkerCommand, PostgresWorkerReport } from "./postgres-worker-process.ts";

interface ScaleOutRun {
  workers: number;
  flows: number;
  stepsPerFlow: number;
  totalSteps: number;
  totalMs: number;
  stepsPerSecond: number;
  loadAverageAfter: number;
}

/** One Worker child process; `close` asks it to drain and exit. */
interface WorkerChild {
  child: ChildProcess;
  close(): Promise<void>;
}

const workerCounts = [1, 2, 4];
const flowsPerRun = 64;
/** Concurrency of each Worker process (the engine's default). */
const workerConcurrency = 8;

/** Worker children not yet exited, so a failed or timed-out run ends them instead of hanging on them. */
const liveChildren = new Set<ChildProcess>();

function startWorkerChild(url: string, schema: string, signals: FinalStepSignals, workerErrors: string[]): Promise<WorkerChild> {
  const child = fork(new URL("./postgres-worker-process.ts", import.meta.url), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, PERDURE_BENCH_WORKER_URL: url, PERDURE_BENCH_WORKER_SCHEMA: schema, PERDURE_BENCH_WORKER_CONCURRENCY: String(workerConcurrency) },
  });
  liveChildren.add(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => {
    liveChildren.delete(child);
    resolve(code);
  }));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: PostgresWorkerReport) => {
      switch (message.kind) {
        case "final":
          signals.signal(message.flowId);
          break;
        case "worker-error":
          workerErrors.push(message.error);
          break;
        case "failed":
          reject(new Error(`PostgreSQL Worker child failed: ${message.error}`));
          break;
        case "ready":
          resolve({
            child,
            close: async () => {
              if (child.connected) child.send({ kind: "close" } satisfies PostgresWorkerCommand);
              const code = await exited;
              if (code !== 0) throw new Error(`PostgreSQL Worker child exited with code ${String(code)}`);
            },
          });
          break;
      }
    });
    void exited.then((code) => reject(new Error(`PostgreSQL Worker child exited with code ${String(code)} before it was ready`)));
  });
}

/**
 * Scale-out on PostgreSQL: 64 concurrent no-op chains served by 1, 2 and 4
 * Worker *processes* (each its own store and pool, concurrency 8), timed from
 * the first `client.start` to the last committed completion. The Client runs
 * in this process; the Workers, this process and the server share the cores.
 */
export async function measurePostgresScaleOut(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const scenario = "postgres scale-out";
  const url = benchDatabaseUrl();
  if (url === undefined) return skippedResult(scenario);
  const stepsPerFlow = settings.quick ? 30 : 100;
  const repetitions = settings.quick ? 1 : 2;
  const schema = createBenchmarkPostgresSchema(url);
  const signals = new FinalStepSignals();
  const flow = createNoopChainFlow("NoopChain", signals);
  const workerErrors: string[] = [];
  const runs: ScaleOutRun[] = [];
  let runNumber = 0;
  try {
    const synchronousCommit = await schema.setting("synchronous_commit");
    // The parent opens first, so the migrations run once before any child opens with migrate off.
    const store = await schema.open();
    const client = new Client({ store });
    const runOnce = async (workers: number, flows: number, steps: number): Promise<ScaleOutRun> => {
      runNumber++;
      const flowIds = Array.from({ length: flows }, (_unused, index) => `run-${runNumber}-flow-${index}`);
      const finalStepsRan = flowIds.map((flowId) => signals.expect(flowId));
      const startedAt = performance.now();
      await Promise.all(flowIds.map((flowId) => client.start(flow, flowId, noopChainInput(steps))));
      await Promise.all(finalStepsRan);
      await Promise.all(flowIds.map((flowId) => confirmCompleted(client, flowId)));
      const totalMs = performance.now() - startedAt;
      return { workers, flows, stepsPerFlow: steps, totalSteps: flows * steps, totalMs, stepsPerSecond: (flows * steps) / (totalMs / 1000), loadAverageAfter: loadavg()[0] ?? Number.NaN };
    };
    await withTimeLimit("postgres scale-out", 600_000, (async () => {
      for (const workers of workerCounts) {
        const children: WorkerChild[] = [];
        try {
          for (let index = 0; index < workers; index++) children.push(await startWorkerChild(url, schema.schema, signals, workerErrors));
          await runOnce(workers, flowsPerRun, 10);
          for (let repetition = 0; repetition < repetitions; repetition++) runs.push(await runOnce(workers, flowsPerRun, stepsPerFlow));
        } finally {
          for (const child of children) await child.close();
        }
        if (workerErrors.length > 0) throw new Error(`a Worker child reported ${workerErrors.length} error(s); first: ${workerErrors[0] ?? ""}`);
      }
    })());
    const single = median(runs.filter((run) => run.workers === 1).map((run) => run.stepsPerSecond));
    const measurements: Measurement[] = workerCounts.map((workers) => {
      const matching = runs.filter((run) => run.workers === workers);
      const stepsPerSecond = median(matching.map((run) => run.stepsPerSecond));
      return {
        scenario,
        metric: `Steps/s, ${flowsPerRun} flows × ${stepsPerFlow} Steps, ${workers} Worker process(es)`,
        value: stepsPerSecond,
        unit: "Steps/s",
        note: `median of ${matching.length}; ×${(stepsPerSecond / single).toFixed(2)} of 1 process; concurrency ${workerConcurrency} each; synchronous_commit=${synchronousCommit}`,
      };
    });
    return { measurements, details: { flowsPerRun, stepsPerFlow, workerConcurrency, synchronousCommit, runs } };
  } finally {
    for (const child of liveChildren) child.kill();
    await schema.dispose();
  }
}
