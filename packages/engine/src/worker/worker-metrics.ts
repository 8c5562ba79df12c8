/**
 * The Worker's metrics, through the OpenTelemetry metrics API: any exporter
 * works, and without an SDK (or without `@opentelemetry/api` installed)
 * every call is a no-op. `@opentelemetry/api` is loaded with a dynamic
 * import when a Worker starts, and only when something in the process has
 * registered an OpenTelemetry global (an SDK's meter provider), so the
 * engine's root entry never loads it and a process without OpenTelemetry
 * never resolves it.
 */
import type { Attributes, Counter, Histogram, Meter, MeterProvider } from "@opentelemetry/api";
import type { ClaimedAttempt } from "./claim-tasks.ts";

/** The instrumentation scope the engine's metrics carry. */
export const engineMeterName = "@perdure/engine";

const apiModuleName = "@opentelemetry/api";

/** Where every 1.x copy of `@opentelemetry/api` keeps its registered globals (the API's own key). */
const apiGlobalsKey = Symbol.for("opentelemetry.js.api.1");

/** The global meter provider's API, when a provider was registered before this Worker started. */
async function registeredMetricsApi(): Promise<MeterProvider | undefined> {
  const globals = (globalThis as Record<symbol, { metrics?: unknown } | undefined>)[apiGlobalsKey];
  if (globals?.metrics === undefined) return undefined;
  return import(apiModuleName).then((api: typeof import("@opentelemetry/api")) => api.metrics, () => undefined);
}

/** The ready-queue depth gauge counts at most this many tasks, so a scrape stays one bounded query. */
export const readyQueueCountLimit = 10_000;

/** How an attempt ended, as the metrics count it. */
export type AttemptEnd = { kind: "committed" } | { kind: "failed"; errorType: string } | { kind: "released" };

interface Instruments {
  started: Counter;
  retried: Counter;
  committed: Counter;
  failed: Counter;
  released: Counter;
  duration: Histogram;
  claimDelay: Histogram;
  takeovers: Counter;
}

/** Bucket bounds in seconds, from a few milliseconds (a Step's commit) to minutes (a long tool call). */
const durationBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

function instrumentsOf(meter: Meter): Instruments {
  const attempts = (name: string, description: string): Counter => meter.createCounter(name, { description, unit: "{attempt}" });
  return {
    started: attempts("perdure.step.started", "Step method attempts a Worker started"),
    retried: attempts("perdure.step.retried", "Step method attempts started after an earlier attempt of the same execution failed"),
    committed: attempts("perdure.step.committed", "Step method attempts whose result was committed"),
    failed: attempts("perdure.step.failed", "Step method attempts that threw or timed out"),
    released: attempts("perdure.step.released", "Step method attempts a closing Worker handed back at its drain timeout"),
    duration: meter.createHistogram("perdure.step.duration", { description: "Time from an attempt's claim to its end", unit: "s", advice: { explicitBucketBoundaries: durationBucketsSeconds } }),
    claimDelay: meter.createHistogram("perdure.step.claim_delay", { description: "Time from when a Step became claimable to when a Worker claimed it", unit: "s", advice: { explicitBucketBoundaries: durationBucketsSeconds } }),
    takeovers: meter.createCounter("perdure.lease.takeovers", { description: "Leases recovered from attempts whose Worker, heartbeat or method timeout lapsed", unit: "{lease}" }),
  };
}

function attributesOf(claim: ClaimedAttempt): Attributes {
  return { "perdure.flow.type": claim.flow.flowType, "perdure.step.type": claim.execution.stepType, "perdure.step.method": claim.method };
}

/** Records one Worker's metrics; every method is a no-op until {@link WorkerMetrics.start} found a meter. */
export class WorkerMetrics {
  private instruments: Instruments | undefined;

  /**
   * Creates the instruments on `meterProvider`, or on the global one when a
   * meter provider was registered before the Worker started; `slots` is read
   * at each collection.
   */
  async start(meterProvider: MeterProvider | undefined, slots: () => { busy: number; limit: number }, readyTasks?: () => Promise<number | undefined>): Promise<void> {
    const provider = meterProvider ?? (await registeredMetricsApi());
    if (provider === undefined) return;
    const meter = provider.getMeter(engineMeterName);
    this.instruments = instrumentsOf(meter);
    const busy = meter.createObservableGauge("perdure.worker.slots.busy", { description: "Step attempts this Worker runs now", unit: "{slot}" });
    const limit = meter.createObservableGauge("perdure.worker.slots.limit", { description: "Step attempts this Worker runs at most (its concurrency)", unit: "{slot}" });
    meter.addBatchObservableCallback((observer) => {
      const current = slots();
      observer.observe(busy, current.busy);
      observer.observe(limit, current.limit);
    }, [busy, limit]);
    if (readyTasks === undefined) return;
    const ready = meter.createObservableGauge("perdure.queue.ready", {
      description: `Tasks of this Worker's Flow types that are claimable now and not claimed (counted up to ${readyQueueCountLimit})`,
      unit: "{task}",
    });
    // A count that fails (the store is down) observes nothing rather than a misleading zero.
    ready.addCallback(async (observer) => {
      const depth = await readyTasks().catch(() => undefined);
      if (depth !== undefined) observer.observe(depth);
    });
  }

  /** An attempt was claimed and its handler is about to run. `now` is on the store's clock. */
  attemptStarted(claim: ClaimedAttempt, now: number): void {
    const instruments = this.instruments;
    if (instruments === undefined) return;
    const attributes = attributesOf(claim);
    instruments.started.add(1, attributes);
    if (claim.execution.attempt > 1) instruments.retried.add(1, attributes);
    // A task that continues a chain keeps the chain's older `available_at` (its place in the queue); it was inserted at `created_at`.
    const claimableAt = Math.max(claim.execution.availableAt, claim.execution.createdAt);
    if (claimableAt <= now) instruments.claimDelay.record((claim.claimedAt - claimableAt) / 1000, attributes);
  }

  /** An attempt ended; `now` is on the store's clock. */
  attemptEnded(claim: ClaimedAttempt, end: AttemptEnd, now: number): void {
    const instruments = this.instruments;
    if (instruments === undefined) return;
    const attributes = attributesOf(claim);
    if (end.kind === "committed") instruments.committed.add(1, attributes);
    if (end.kind === "failed") instruments.failed.add(1, { ...attributes, "error.type": end.errorType });
    if (end.kind === "released") instruments.released.add(1, attributes);
    instruments.duration.record(Math.max(0, now - claim.claimedAt) / 1000, { ...attributes, "perdure.step.outcome": end.kind });
  }

  /** A sweep recovered a lapsed lease (`WorkerLost`, `HeartbeatTimeout` or `StepTimeout`). */
  leaseTakenOver(flowType: string, stepType: string, errorType: string): void {
    this.instruments?.takeovers.add(1, { "perdure.flow.type": flowType, "perdure.step.type": stepType, "error.type": errorType });
  }
}
