/**
 * What tracing costs a turn: the turn-overhead turn (one read tool and an
 * answer, process-crash-safe) on three session Flows that differ only in
 * tracing: off (`isEnabled: false`), the API without an SDK (the default,
 * with no global provider registered), and the SDK exporting every span to
 * memory through a SimpleSpanProcessor. The AsyncLocalStorage context
 * manager is registered only for the SDK variant's turns, as
 * `NodeTracerProvider.register()` would; the API-without-SDK turns run on the
 * API's no-op context manager, as in an application that installed no SDK.
 * All three share one store and one Worker and take turns one after
 * another, in a rotating order, so load from anything else on the machine
 * falls on all of them alike and every session's transcript grows alike.
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { createAgentSessionFlow, type AgentSessionOptions } from "@perdure/agents";
import { Client, Worker } from "@perdure/engine";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "../../engine/support.ts";
import { median, openTemporaryBenchmarkStore, withTimeLimit, WorkerErrorCollector } from "../../engine/support.ts";
import { BenchScriptedRunner, FinalAnswerSignals } from "../scripted-runner.ts";
import { checkSessionState, percentile, runOneTurn, startSession, type SessionBench } from "../session-bench.ts";

const variants = ["off", "api-without-sdk", "sdk-in-memory"] as const;
type TracingVariant = (typeof variants)[number];

interface VariantSamples {
  turnMs: number[];
  cpuMs: number[];
  spans: number;
}

function tracingOptions(variant: TracingVariant, provider: BasicTracerProvider): AgentSessionOptions {
  if (variant === "off") return { tracing: { isEnabled: false } };
  return variant === "sdk-in-memory" ? { tracing: { tracerProvider: provider } } : {};
}

/**
 * Registers the AsyncLocalStorage context manager for an SDK turn and
 * removes it for the others. Turns never overlap (each one waits until its
 * last commit), so no Step of one variant runs under another's manager.
 */
function useContextManagerFor(variant: TracingVariant, contextManager: AsyncLocalStorageContextManager): void {
  context.disable();
  if (variant === "sdk-in-memory") context.setGlobalContextManager(contextManager.enable());
}

/** Only the SDK variant exports, and exactly its 4 spans per turn: invoke_agent, two chat, execute_tool. */
function checkSpanCounts(samples: ReadonlyMap<TracingVariant, VariantSamples>, turns: number): void {
  for (const [variant, sample] of samples) {
    const expected = variant === "sdk-in-memory" ? 4 * turns : 0;
    if (sample.spans !== expected) throw new Error(`tracing variant ${variant} exported ${sample.spans} spans in ${turns} turns; expected ${expected}`);
  }
}

/** Per-turn time and CPU of each tracing variant, the paired differences from "off", and the spans per turn. */
export async function measureTracingOverhead(settings: BenchmarkSettings): Promise<ScenarioResult> {
  const turns = settings.quick ? 150 : 500;
  const warmUpTurns = settings.quick ? 30 : 100;
  const contextManager = new AsyncLocalStorageContextManager();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const temporary = openTemporaryBenchmarkStore("process-crash-safe");
  const errors = new WorkerErrorCollector();
  const client = new Client({ store: temporary.store });
  const benches = new Map<TracingVariant, SessionBench>();
  for (const variant of variants) {
    const signals = new FinalAnswerSignals();
    const runner = new BenchScriptedRunner(signals);
    const flow = createAgentSessionFlow(runner, `BenchTracing-${variant}`, tracingOptions(variant, provider));
    benches.set(variant, { temporary, flow, runner, signals, client, worker: undefined as unknown as Worker, errors, dispose: async () => undefined });
  }
  const worker = new Worker({ store: temporary.store, flows: [...benches.values()].map((bench) => bench.flow), concurrency: 8, onError: errors.onError });
  await worker.start();
  const samples = new Map<TracingVariant, VariantSamples>(variants.map((variant) => [variant, { turnMs: [], cpuMs: [], spans: 0 }]));
  try {
    await withTimeLimit("tracing overhead", 400_000, (async () => {
      for (const [variant, bench] of benches) {
        useContextManagerFor(variant, contextManager);
        await startSession(bench, `warm-up-${variant}`);
        for (let turn = 1; turn <= warmUpTurns; turn++) await runOneTurn(bench, `warm-up-${variant}`, turn);
        await startSession(bench, `timed-${variant}`);
        // The first turn also waits for the session's start; it is not timed.
        await runOneTurn(bench, `timed-${variant}`, 1);
      }
      exporter.reset();
      for (let turn = 2; turn <= turns + 1; turn++) {
        for (let index = 0; index < variants.length; index++) {
          const variant = variants[(turn + index) % variants.length] as TracingVariant;
          const sample = samples.get(variant) as VariantSamples;
          useContextManagerFor(variant, contextManager);
          const cpuAtStart = process.cpuUsage();
          sample.turnMs.push((await runOneTurn(benches.get(variant) as SessionBench, `timed-${variant}`, turn)).ms);
          const cpu = process.cpuUsage(cpuAtStart);
          sample.cpuMs.push((cpu.user + cpu.system) / 1000);
          // Keep the exporter small, as a batch exporter would.
          sample.spans += exporter.getFinishedSpans().length;
          exporter.reset();
        }
      }
      for (const [variant, bench] of benches) await checkSessionState(bench, `timed-${variant}`, turns + 1);
      checkSpanCounts(samples, turns);
      errors.throwIfAny();
    })());
  } finally {
    await worker.close();
    await temporary.dispose();
    await provider.shutdown();
    context.disable();
  }
  const off = samples.get("off") as VariantSamples;
  const measurements: Measurement[] = [];
  const details: Record<string, unknown> = { turns, warmUpTurns, order: "rotating, one turn of each variant in turn", contextManager: "AsyncLocalStorage for sdk-in-memory turns only" };
  for (const variant of variants) {
    const sample = samples.get(variant) as VariantSamples;
    const scenario = `tracing-overhead ${variant}`;
    const pairedMs = sample.turnMs.map((value, index) => value - (off.turnMs[index] ?? Number.NaN));
    const pairedCpuMs = sample.cpuMs.map((value, index) => value - (off.cpuMs[index] ?? Number.NaN));
    measurements.push(
      { scenario, metric: "turn (read tool + answer), median", value: median(sample.turnMs), unit: "ms", note: `${turns} turns, interleaved with the other variants` },
      { scenario, metric: "turn, p99", value: percentile(sample.turnMs, 99), unit: "ms" },
      { scenario, metric: "process CPU (user+sys) per turn, median", value: median(sample.cpuMs), unit: "ms" },
    );
    if (variant !== "off") {
      measurements.push(
        { scenario, metric: "turn minus the same turn with tracing off, median", value: median(pairedMs), unit: "ms" },
        { scenario, metric: "CPU minus the same turn with tracing off, median", value: median(pairedCpuMs), unit: "ms" },
      );
    }
    if (variant === "sdk-in-memory") measurements.push({ scenario, metric: "spans exported per turn", value: sample.spans / turns, unit: "spans/turn" });
    details[variant] = { medianMsPer100Turns: Array.from({ length: Math.ceil(turns / 100) }, (_unused, index) => median(sample.turnMs.slice(index * 100, (index + 1) * 100))) };
  }
  return { measurements, details };
}
