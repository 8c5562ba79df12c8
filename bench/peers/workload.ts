/**
 * The workload every system in the peer comparison runs: flows of 0, 3 and
 * 10 no-op Steps, one caller at a time for latency, then many callers at
 * once for throughput. A caller starts a flow and waits for its result, the
 * way an application would.
 */
import { median } from "../engine/support.ts";

/** One durable-execution system under test. */
export interface WorkloadSystem {
  /** Row label, such as "Perdure PostgreSQL" or "DBOS 5.3 (PostgreSQL)". */
  readonly name: string;
  /** Runs one flow (workflow, invocation) of `steps` no-op Steps to its committed result. */
  runFlow(flowId: string, steps: number): Promise<void>;
  close(): Promise<void>;
}

/** What one measurement round of one system gave. */
export interface WorkloadRound {
  /** Median milliseconds from start to result, one caller, by Step count. */
  flowMsBySteps: Record<string, number>;
  /** Least-squares slope of flow time over Step count: the cost of one more Step. */
  msPerStep: number;
  /** Steps per second by number of concurrent callers, each running flows of `throughputSteps` Steps one after another. */
  stepsPerSecondByCallers: Record<string, number>;
  throughputSteps: number;
}

export interface WorkloadSettings {
  stepCounts: readonly number[];
  /** Sequential flows per Step count for the latency part. */
  flowsPerCount: number;
  /** Concurrent callers of the throughput part, measured one count after another. */
  callers: readonly number[];
  /** Steps of each flow in the throughput part. */
  throughputSteps: number;
  /** Flows each caller runs in the throughput part, by caller count. */
  flowsPerCaller(callers: number): number;
}

let flowSerial = 0;

function nextFlowId(prefix: string): string {
  flowSerial += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${flowSerial}`;
}

/** Least-squares slope of `y` over `x`. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  const numerator = points.reduce((sum, point) => sum + (point.x - meanX) * (point.y - meanY), 0);
  const denominator = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  return denominator === 0 ? Number.NaN : numerator / denominator;
}

/** Times sequential flows of each Step count; returns the median per count. */
export async function measureLatency(system: WorkloadSystem, settings: WorkloadSettings): Promise<Record<string, number>> {
  const byCount: Record<string, number> = {};
  for (const steps of settings.stepCounts) {
    const times: number[] = [];
    for (let index = 0; index < settings.flowsPerCount; index++) {
      const startedAt = performance.now();
      await system.runFlow(nextFlowId(`latency-${steps}`), steps);
      times.push(performance.now() - startedAt);
    }
    byCount[String(steps)] = median(times);
  }
  return byCount;
}

/** Steps per second with `callers` callers, each running its flows one after another. */
export async function measureThroughput(system: WorkloadSystem, callers: number, steps: number, flowsPerCaller: number): Promise<number> {
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: callers }, async () => {
    for (let index = 0; index < flowsPerCaller; index++) await system.runFlow(nextFlowId(`throughput-${steps}`), steps);
  }));
  const seconds = (performance.now() - startedAt) / 1000;
  return (callers * flowsPerCaller * steps) / seconds;
}

/** One round: latency by Step count, the per-Step slope, then throughput at each caller count. */
export async function measureRound(system: WorkloadSystem, settings: WorkloadSettings): Promise<WorkloadRound> {
  const flowMsBySteps = await measureLatency(system, settings);
  const msPerStep = slope(settings.stepCounts.map((steps) => ({ x: steps, y: flowMsBySteps[String(steps)] ?? Number.NaN })));
  const stepsPerSecondByCallers: Record<string, number> = {};
  for (const callers of settings.callers) {
    stepsPerSecondByCallers[String(callers)] = await measureThroughput(system, callers, settings.throughputSteps, settings.flowsPerCaller(callers));
  }
  return { flowMsBySteps, msPerStep, stepsPerSecondByCallers, throughputSteps: settings.throughputSteps };
}
