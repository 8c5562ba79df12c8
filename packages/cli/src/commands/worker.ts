/**
 * `perdure worker`: Workers only, no HTTP API, for deployments where web
 * servers and Workers scale apart. SIGTERM (or Ctrl-C) drains: it stops
 * claiming, lets running Steps finish up to the drain timeout, releases the
 * rest so another Worker takes them at once, and exits 0. A second signal
 * exits at once (143 for SIGTERM, 130 for SIGINT), as a kill would.
 */
import { Client, Worker } from "@perdure/engine";
import { loadAgentFlows } from "../entry/load-agent-flows.ts";
import { openConfiguredStore, type StoreLocation } from "../store/open-configured-store.ts";
import { createCliLogger } from "../logging/cli-logger.ts";
import type { LogFormat } from "../logging/log-format.ts";
import { startOperationsServer, type ReadinessReport, type RunningOperationsServer } from "../operations/operations-server.ts";
import { startPrometheusMetrics } from "../operations/prometheus-metrics.ts";
import { StoreOutageLog } from "../operations/store-outage-log.ts";
import { startWorkerIdleMemoryRelease } from "../server/idle-memory-release.ts";
import { startYoungGenerationCap } from "../server/young-generation-cap.ts";

/** Options of `perdure worker`. */
export interface WorkerCommandOptions extends StoreLocation {
  entry: string;
  /** Step methods run at once. @default 8 */
  concurrency: number;
  /** How long a drain waits for running Steps before releasing them. @default 25_000 */
  drainTimeoutMs: number;
  /** Where `/metrics`, `/healthz` and `/readyz` listen. @default none: no operations server */
  operations?: { port: number; host: string; token: string | undefined } | undefined;
  /** How log entries are written (see `createCliLogger`). @default "json" */
  logFormat?: LogFormat;
}

/** The line a started `perdure worker` prints; tests and supervisors wait for it. */
export const workerStartedLinePattern = /^perdure worker: (\S+) running (.+) on (.+) with concurrency (\d+)$/m;

/** Exit codes of a second signal: 128 + the signal's number, as a shell reports a process killed by it. */
const immediateExitCodes = { SIGTERM: 143, SIGINT: 130 } as const;

/** Runs Workers until a signal, then drains; resolves with the exit code. */
export async function runWorkerCommand(options: WorkerCommandOptions): Promise<number> {
  const flows = await loadAgentFlows(options.entry);
  // A Worker's commits are what sessions stand on: on SQLite it takes fsync durability.
  const metrics = options.operations === undefined ? undefined : startPrometheusMetrics();
  const { store, description } = await openConfiguredStore(options, { sqliteDurability: "full" });
  const logger = createCliLogger({ name: "perdure worker", format: options.logFormat ?? "json" });
  const outageLog = new StoreOutageLog(logger);
  const worker = new Worker({
    store,
    flows: [...flows.values()],
    concurrency: options.concurrency,
    logger,
    onError: outageLog.onError,
    ...(metrics === undefined ? {} : { meterProvider: metrics.meterProvider }),
  });
  let operations: RunningOperationsServer | undefined;
  try {
    await worker.start();
    if (options.operations !== undefined && metrics !== undefined) {
      operations = await startOperationsServer({ ...options.operations, handleScrape: (request, response) => metrics.handleScrape(request, response), readiness: () => workerReadiness(new Client({ store }), worker) });
      console.log(`perdure worker: metrics at ${operations.url}/metrics, health at ${operations.url}/healthz and ${operations.url}/readyz`);
    }
  } catch (error) {
    await worker.close({ drainTimeoutMs: 0 });
    await store.close();
    throw error;
  }
  const outageCheck = setInterval(() => outageLog.noteClaiming(worker.isClaiming), 1000);
  outageCheck.unref();
  // Bounds the process's resident memory: the young generation stays at 32 MiB under a burst, and
  // the pages a burst left are given back once the Worker has been idle for 10 s (bench/RESULTS.md).
  const youngGenerationCap = startYoungGenerationCap();
  const memoryRelease = startWorkerIdleMemoryRelease(worker);
  const signal = await new Promise<keyof typeof immediateExitCodes>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
    console.log(`perdure worker: ${worker.workerId} running ${[...flows.keys()].join(", ")} on ${description} with concurrency ${options.concurrency}`);
  });
  const exitAtOnce = (second: keyof typeof immediateExitCodes): void => {
    console.error(`perdure worker: ${second} again: exiting without waiting; running Steps are recovered once this Worker's liveness lapses`);
    process.exit(immediateExitCodes[second]);
  };
  process.once("SIGTERM", () => exitAtOnce("SIGTERM"));
  process.once("SIGINT", () => exitAtOnce("SIGINT"));
  console.log(`perdure worker: ${signal}: draining ${worker.activeCount} running Step(s) for up to ${options.drainTimeoutMs} ms; send it again to exit at once`);
  clearInterval(outageCheck);
  memoryRelease.stop();
  youngGenerationCap.stop();
  const { released } = await worker.close({ drainTimeoutMs: options.drainTimeoutMs });
  await operations?.close();
  await store.close();
  await metrics?.shutdown();
  console.log(released === 0 ? "perdure worker: drained; exiting" : `perdure worker: released ${released} Step(s) still running to other Workers; exiting`);
  return 0;
}

/** `/readyz` of a Worker process: the store answers a read, and the Worker is claiming. */
export async function workerReadiness(client: Client, worker: Worker): Promise<ReadinessReport> {
  const checks: Record<string, string> = {};
  try {
    await client.listFlows({ limit: 1 });
    checks.store = "ok";
  } catch (error) {
    checks.store = `the store did not answer: ${error instanceof Error ? error.message : String(error)}`;
  }
  checks.worker = worker.isClaiming ? "ok" : "the Worker is not claiming: it is closing, or its liveness has not reached the store lately";
  return { ready: Object.values(checks).every((check) => check === "ok"), checks };
}

/**
 * A duration from the command line: `25s`, `1500ms`, `2m`, or a plain
 * number of seconds. Throws an error naming the value otherwise.
 */
export function parseDuration(optionName: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (match?.[1] === undefined) throw new Error(`${optionName} ${JSON.stringify(text)} is invalid: use a duration such as 25s, 1500ms or 2m`);
  const scale = match[2] === "ms" ? 1 : match[2] === "m" ? 60_000 : 1000;
  return Math.round(Number(match[1]) * scale);
}

/** `--concurrency`: a positive integer. */
export function parseConcurrency(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value <= 0) throw new Error(`--concurrency ${JSON.stringify(text)} is invalid: use a positive integer`);
  return value;
}

/** A port option: an integer from 0 to 65535. */
export function parsePort(optionName: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > 65_535) throw new Error(`${optionName} ${JSON.stringify(text)} is invalid: use 0 to 65535`);
  return value;
}
