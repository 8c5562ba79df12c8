/**
 * What the session metrics cost per Step: turns of the benchmark's scripted
 * agent (7 Steps each: turn counters, interrupt counters and the GenAI
 * client histograms recorded) on a fresh SQLite file (process-crash-safe),
 * in a process with no meter provider (nothing is loaded, every call
 * returns at its first check) and in one where the SDK's MeterProvider is
 * registered as the global one, alternating child processes round by round
 * so that machine load hits both alike. The Worker is given a no-op meter
 * provider in both, so only the session's metrics are compared.
 *
 *   node bench/agents/agent-metrics-overhead.ts [--rounds=6] [--sessions=40]
 */
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { createNoopMeter, metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { createAgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { BenchScriptedRunner, FinalAnswerSignals } from "./scripted-runner.ts";

/** A reader that is never scraped: recording is what is measured. */
class IdleReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const { values } = parseArgs({ options: { rounds: { type: "string" }, sessions: { type: "string" }, mode: { type: "string" } } });
const rounds = Number(values.rounds ?? "6");
const sessionCount = Number(values.sessions ?? "40");
const stepsPerTurn = 7;

/** Milliseconds of wall and process CPU per Step for `sessionCount` one-turn sessions in this process. */
async function round(): Promise<{ wall: number; cpu: number }> {
  const temporary = createTemporarySqliteStore();
  const flow = createAgentSessionFlow(new BenchScriptedRunner(new FinalAnswerSignals()), "MeteredBenchAgent", { tracing: { isEnabled: false } });
  const worker = new Worker({ store: temporary.store, flows: [flow], concurrency: 8, meterProvider: { getMeter: () => createNoopMeter() } });
  await worker.start();
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < sessionCount; index += 1) await sessions.startSession(`s-${index}`, { initialMessage: `where is order ${index}?` });
  for (let index = 0; index < sessionCount; index += 1) await sessions.waitForTurnCount(`s-${index}`, 1, { timeoutMs: 120_000 });
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await worker.close();
  await temporary.dispose();
  const steps = sessionCount * stepsPerTurn;
  return { wall: wall / steps, cpu: (cpu.user + cpu.system) / 1000 / steps };
}

function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] ?? 0 : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

if (values.mode !== undefined) {
  if (values.mode === "on") metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new IdleReader()] }));
  await round();
  console.log(JSON.stringify(await round()));
  process.exit(0);
}

const childRound = (mode: "on" | "off"): { wall: number; cpu: number } =>
  JSON.parse(execFileSync(process.execPath, [...process.execArgv, process.argv[1] ?? "", `--mode=${mode}`, `--sessions=${sessionCount}`], { encoding: "utf8" }).trim().split("\n").at(-1) ?? "{}") as { wall: number; cpu: number };
const off: Array<{ wall: number; cpu: number }> = [];
const on: Array<{ wall: number; cpu: number }> = [];
for (let index = 0; index < rounds; index += 1) {
  // Alternate which goes first, so a drift in load favours neither.
  if (index % 2 === 0) {
    off.push(childRound("off"));
    on.push(childRound("on"));
  } else {
    on.push(childRound("on"));
    off.push(childRound("off"));
  }
}
const summary = (field: "wall" | "cpu") => {
  const without = median(off.map((each) => each[field]));
  const withSdk = median(on.map((each) => each[field]));
  return { offMedianMsPerStep: Number(without.toFixed(4)), onMedianMsPerStep: Number(withSdk.toFixed(4)), overheadPercent: Number((((withSdk - without) / without) * 100).toFixed(2)) };
};
console.log(JSON.stringify({ rounds, sessions: sessionCount, stepsPerTurn, wall: summary("wall"), processCpu: summary("cpu"), offWall: off.map((each) => Number(each.wall.toFixed(3))), onWall: on.map((each) => Number(each.wall.toFixed(3))) }, null, 2));
