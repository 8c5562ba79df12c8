import { type ChildProcess, fork } from "node:child_process";
import { Client } from "@perdure/engine";
import { createIdleWaiterFlow } from "../flows.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../support.ts";
import { mebibyte, openTemporaryBenchmarkStore, withTimeLimit } from "../support.ts";
import type { IdleMemoryWorkerCommand, IdleMemoryWorkerReport, MemorySample } from "./idle-memory-worker.ts";

interface IdleMemoryRun {
  idleFlows: number;
  startMs: number;
  askMs: number;
  beforeWorker: MemorySample;
  afterAsking: MemorySample;
  afterIdle: MemorySample;
  /** A fresh Worker process on the same database, whose flows are all already waiting. */
  restartedAfterIdle: MemorySample;
}

/** Heap growth allowed between the small and the large run before we call it growth with idle flows. */
const heapGrowthToleranceBytes = 1 * mebibyte;

/** Worker children not yet exited, so a failed or timed-out run can end them instead of hanging on them. */
const liveChildren = new Set<ChildProcess>();

/** Runs the Worker in a child process until it has asked every flow, and collects its memory report. */
function runWorkerChild(path: string, idleFlows: number, idleMs: number): Promise<{ report: Extract<IdleMemoryWorkerReport, { kind: "measured" }>; close: () => Promise<void> }> {
  const child = fork(new URL("./idle-memory-worker.ts", import.meta.url), [path, String(idleFlows), String(idleMs)], { execArgv: ["--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  liveChildren.add(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => {
    liveChildren.delete(child);
    resolve(code);
  }));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("message", (message: IdleMemoryWorkerReport) => {
      if (message.kind === "failed") {
        reject(new Error(`idle-memory Worker child failed: ${message.error}`));
        return;
      }
      resolve({
        report: message,
        close: async () => {
          child.send({ kind: "close" } satisfies IdleMemoryWorkerCommand);
          const code = await exited;
          if (code !== 0) throw new Error(`idle-memory Worker child exited with code ${String(code)}`);
        },
      });
    });
    void exited.then((code) => reject(new Error(`idle-memory Worker child exited with code ${String(code)} before reporting`)));
  });
}

async function measureIdleFlows(idleFlows: number, idleMs: number): Promise<IdleMemoryRun> {
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const flow = createIdleWaiterFlow(() => undefined);
  const client = new Client({ store: temporary.store });
  try {
    // The flows exist before the Worker starts, so its child process does nothing but claim and ask them.
    const flowIds = Array.from({ length: idleFlows }, (_unused, index) => `idle-${String(index).padStart(6, "0")}`);
    const startedAt = performance.now();
    for (let offset = 0; offset < flowIds.length; offset += 500) {
      await Promise.all(flowIds.slice(offset, offset + 500).map((flowId) => client.start(flow, flowId)));
    }
    const startMs = performance.now() - startedAt;
    const child = await runWorkerChild(temporary.path, idleFlows, idleMs);
    try {
      if (child.report.workerErrors.length > 0) throw new Error(`the Worker reported errors: ${child.report.workerErrors[0] ?? ""}`);
      // Check every flow really is idle-waiting, not merely asked.
      for (const flowId of flowIds) {
        const description = await client.describe(flowId);
        const statuses = description.executions.map((execution) => execution.status).join(",");
        if (description.status !== "running" || statuses !== "waiting") throw new Error(`flow ${flowId} is ${description.status} with executions [${statuses}], expected one waiting execution`);
      }
    } finally {
      await child.close();
    }
    // A Worker started on flows that already wait has nothing to claim: its memory shows the steady state without the asking burst.
    const restarted = await runWorkerChild(temporary.path, 0, idleMs);
    await restarted.close();
    const { beforeWorker, afterAsking, afterIdle, askMs } = child.report;
    return { idleFlows, startMs, askMs, beforeWorker, afterAsking, afterIdle, restartedAfterIdle: restarted.report.afterIdle };
  } finally {
    await temporary.dispose();
  }
}

/**
 * Worker memory with idle waiting flows: a Worker process that asked 0,
 * 1,000 or 10,000 flows whose start Step waits on a Channel. Idle flows live
 * in the database only, so the Worker's heap must not grow with their count.
 */
export async function measureIdleMemory(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const [smallCount, largeCount] = settings.quick ? [200, 2000] : [1000, 10_000];
  const idleMs = settings.quick ? 300 : 2000;
  const runs: IdleMemoryRun[] = [];
  try {
    await withTimeLimit("idle memory", 120_000, (async () => {
      for (const idleFlows of [0, smallCount, largeCount]) runs.push(await measureIdleFlows(idleFlows, idleMs));
    })());
  } finally {
    for (const child of liveChildren) child.kill();
  }
  const scenario = "idle-memory process-crash-safe";
  const measurements: Measurement[] = [];
  for (const run of runs) {
    measurements.push({
      scenario,
      metric: `Worker heapUsed after GC, ${run.idleFlows} idle flows`,
      value: run.afterIdle.heapUsed / mebibyte,
      unit: "MiB",
      note: `RSS ${(run.afterIdle.rss / mebibyte).toFixed(1)} MiB (peak of the asking burst, heapTotal was ${(run.afterAsking.heapTotal / mebibyte).toFixed(1)} MiB)`,
    });
    measurements.push({
      scenario,
      metric: `restarted Worker RSS, ${run.idleFlows} flows already waiting`,
      value: run.restartedAfterIdle.rss / mebibyte,
      unit: "MiB",
      note: `heapUsed ${(run.restartedAfterIdle.heapUsed / mebibyte).toFixed(2)} MiB`,
    });
  }
  const small = runs.find((run) => run.idleFlows === smallCount);
  const large = runs.find((run) => run.idleFlows === largeCount);
  if (small !== undefined && large !== undefined) {
    const growth = large.afterIdle.heapUsed - small.afterIdle.heapUsed;
    measurements.push({
      scenario,
      metric: `heap growth ${smallCount} → ${largeCount} idle flows`,
      value: growth / mebibyte,
      unit: "MiB",
      target: { maximum: heapGrowthToleranceBytes / mebibyte, text: "no growth (< 1 MiB)" },
      note: `${(growth / (largeCount - smallCount)).toFixed(1)} bytes per extra idle flow`,
    });
    const restartedHeapGrowth = large.restartedAfterIdle.heapUsed - small.restartedAfterIdle.heapUsed;
    measurements.push({
      scenario,
      metric: `restarted Worker heap growth ${smallCount} → ${largeCount} idle flows`,
      value: restartedHeapGrowth / mebibyte,
      unit: "MiB",
      target: { maximum: heapGrowthToleranceBytes / mebibyte, text: "no growth (< 1 MiB)" },
      // RSS also counts SQLite's page cache (up to about 2 MiB) and allocator slack, so it moves a few MiB from run to run.
      note: `RSS growth ${((large.restartedAfterIdle.rss - small.restartedAfterIdle.rss) / mebibyte).toFixed(1)} MiB`,
    });
    measurements.push({
      scenario,
      metric: `asks/s: Worker claiming and asking ${largeCount} flows`,
      value: largeCount / (large.askMs / 1000),
      unit: "asks/s",
      note: `client.start ${(largeCount / (large.startMs / 1000)).toFixed(0)} flows/s`,
    });
  }
  return { measurements, details: { idleMs, runs } };
}
