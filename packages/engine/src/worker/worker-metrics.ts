/**
 * The Worker's metrics, through the OpenTelemetry metrics API: any exporter
 * works, and without an SDK (or without `@opentelemetry/api` installed)
 * every call is a no-op. `@opentelemetry/api` is loaded with a dynamic
 * import when a Worker starts, and only when something in the process has
 * registered an OpenTelemetry global (an SDK's meter provider), so the
 * engine's root entry never loads it and a process without OpenTelemetry
 * never resolves it.
 */
import type { Attributes, Counter, Histogram, Meter, MeterProvider, ObservableCallback, ObservableGauge } from "@opentelemetry/api";
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

/** Bucket bounds in seconds, from a few milliseconds (a Step's commit) to minutes (a long tool call). */
const durationBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

type EndKind = AttemptEnd["kind"];

/**
 * The counts of one Step method of one Flow type, kept as plain numbers and
 * read by the observable counters at each collection, with their attribute
 * objects made once.
 */
interface StepSeries {
  readonly attributes: Attributes;
  started: number;
  retried: number;
  committed: number;
  released: number;
  /** Failed attempts by `error.type`, with that data point's attributes. */
  readonly failed: Map<string, { attributes: Attributes; count: number }>;
  /** Seconds from claim to end summed over the attempts that ended each way, with their attributes. */
  readonly time: Record<EndKind, { attributes: Attributes; seconds: number }>;
}

function newSeries(flowType: string, stepType: string, method: string): StepSeries {
  const attributes = { "perdure.flow.type": flowType, "perdure.step.type": stepType, "perdure.step.method": method };
  const time = (outcome: EndKind) => ({ attributes: { ...attributes, "perdure.step.outcome": outcome }, seconds: 0 });
  return { attributes, started: 0, retried: 0, committed: 0, released: 0, failed: new Map(), time: { committed: time("committed"), failed: time("failed"), released: time("released") } };
}

/** The series of one Step type, by method. */
interface MethodSeries {
  execute?: StepSeries;
  wait_until?: StepSeries;
}

type SlotSource = () => { busy: number; limit: number };

/**
 * The instruments of one meter and the counts behind its observable
 * instruments, shared by every Worker that records into that meter, so that
 * two Workers of one process add up instead of overwriting each other's
 * observations.
 *
 * What an attempt costs: it adds to plain numbers, which the observable
 * counters read when the meter's reader collects (a Prometheus scrape, a
 * periodic export), and records the two histograms without attributes. The
 * SDK hashes the attributes of every synchronous recording into a new
 * string; measured end to end on a no-op Step (bench/RESULTS.md), two
 * histograms by Step type cost 6–9 % of the Step, these cost about 1 %. So
 * the histograms describe the Workers of the process, and
 * `perdure.step.time` gives each Step type's mean duration.
 */
class MeterTable {
  readonly duration: Histogram;
  readonly claimDelay: Histogram;
  readonly takeovers: Counter;
  readonly slotSources = new Set<SlotSource>();
  /** By Flow type, then Step type, then method. */
  private readonly series = new Map<string, Map<string, MethodSeries>>();

  constructor(meter: Meter) {
    const attempts = (name: string, description: string) => meter.createObservableCounter(name, { description, unit: "{attempt}" });
    const started = attempts("perdure.step.started", "Step method attempts a Worker started");
    const retried = attempts("perdure.step.retried", "Step method attempts started after an earlier attempt of the same execution failed");
    const committed = attempts("perdure.step.committed", "Step method attempts whose result was committed");
    const failed = attempts("perdure.step.failed", "Step method attempts that threw or timed out");
    const released = attempts("perdure.step.released", "Step method attempts a closing Worker handed back at its drain timeout");
    const time = meter.createObservableCounter("perdure.step.time", { description: "Seconds from claim to end, summed over the attempts that ended (divided by their count: the mean duration)", unit: "s" });
    const busy = meter.createObservableGauge("perdure.worker.slots.busy", { description: "Step attempts the Workers of this process run now", unit: "{slot}" });
    const limit = meter.createObservableGauge("perdure.worker.slots.limit", { description: "Step attempts the Workers of this process run at most (their concurrency)", unit: "{slot}" });
    this.duration = meter.createHistogram("perdure.step.duration", { description: "Time from an attempt's claim to its end, over every Step type", unit: "s", advice: { explicitBucketBoundaries: durationBucketsSeconds } });
    this.claimDelay = meter.createHistogram("perdure.step.claim_delay", { description: "Time from when a Step became claimable to when a Worker claimed it", unit: "s", advice: { explicitBucketBoundaries: durationBucketsSeconds } });
    this.takeovers = meter.createCounter("perdure.lease.takeovers", { description: "Leases recovered from attempts whose Worker, heartbeat or method timeout lapsed", unit: "{lease}" });
    meter.addBatchObservableCallback((observer) => {
      for (const byStep of this.series.values()) {
        for (const byMethod of byStep.values()) {
          for (const series of [byMethod.execute, byMethod.wait_until]) {
            if (series === undefined) continue;
            // A data point appears once its count is above zero, as it would with synchronous counters.
            if (series.started > 0) observer.observe(started, series.started, series.attributes);
            if (series.retried > 0) observer.observe(retried, series.retried, series.attributes);
            if (series.committed > 0) observer.observe(committed, series.committed, series.attributes);
            if (series.released > 0) observer.observe(released, series.released, series.attributes);
            for (const failure of series.failed.values()) observer.observe(failed, failure.count, failure.attributes);
            if (series.committed > 0) observer.observe(time, series.time.committed.seconds, series.time.committed.attributes);
            if (series.failed.size > 0) observer.observe(time, series.time.failed.seconds, series.time.failed.attributes);
            if (series.released > 0) observer.observe(time, series.time.released.seconds, series.time.released.attributes);
          }
        }
      }
      if (this.slotSources.size === 0) return;
      let busyNow = 0;
      let limitNow = 0;
      for (const source of this.slotSources) {
        const slots = source();
        busyNow += slots.busy;
        limitNow += slots.limit;
      }
      observer.observe(busy, busyNow);
      observer.observe(limit, limitNow);
    }, [started, retried, committed, failed, released, time, busy, limit]);
  }

  /** The series of an attempt's Flow type, Step type and method, made on first use. */
  seriesOf(claim: ClaimedAttempt): StepSeries {
    const flowType = claim.flow.flowType;
    const stepType = claim.execution.stepType;
    let byStep = this.series.get(flowType);
    if (byStep === undefined) this.series.set(flowType, byStep = new Map<string, MethodSeries>());
    let byMethod = byStep.get(stepType);
    if (byMethod === undefined) byStep.set(stepType, byMethod = {});
    return byMethod[claim.method] ??= newSeries(flowType, stepType, claim.method);
  }
}

/** One table per meter: an SDK hands out the same Meter for the same name, and the global API forwards to it. */
const tables = new WeakMap<Meter, MeterTable>();

function tableOf(meter: Meter): MeterTable {
  let table = tables.get(meter);
  if (table === undefined) tables.set(meter, table = new MeterTable(meter));
  return table;
}

/** Records one Worker's metrics; every method is a no-op until {@link WorkerMetrics.start} found a meter. */
export class WorkerMetrics {
  private table: MeterTable | undefined;
  private slots: SlotSource | undefined;
  private readyGauge: ObservableGauge | undefined;
  private readyCallback: ObservableCallback | undefined;

  /** Whether a meter provider was found: callers skip what only the metrics need (reading the clock). */
  get enabled(): boolean {
    return this.table !== undefined;
  }

  /**
   * Creates the instruments on `meterProvider`, or on the global one when a
   * meter provider was registered before the Worker started; `slots` is read
   * at each collection.
   */
  async start(meterProvider: MeterProvider | undefined, slots: SlotSource, readyTasks?: () => Promise<number | undefined>): Promise<void> {
    const provider = meterProvider ?? (await registeredMetricsApi());
    if (provider === undefined) return;
    const meter = provider.getMeter(engineMeterName);
    const table = tableOf(meter);
    this.table = table;
    this.slots = slots;
    table.slotSources.add(slots);
    if (readyTasks === undefined) return;
    const ready = meter.createObservableGauge("perdure.queue.ready", {
      description: `Tasks of this Worker's Flow types that are claimable now and not claimed (counted up to ${readyQueueCountLimit})`,
      unit: "{task}",
    });
    // A count that fails (the store is down) observes nothing rather than a misleading zero.
    const callback: ObservableCallback = async (observer) => {
      const depth = await readyTasks().catch(() => undefined);
      if (depth !== undefined) observer.observe(depth);
    };
    ready.addCallback(callback);
    this.readyGauge = ready;
    this.readyCallback = callback;
  }

  /** The Worker closed: its slots and ready queue are no longer observed; its counts stay, as counters must. */
  stop(): void {
    if (this.slots !== undefined) this.table?.slotSources.delete(this.slots);
    if (this.readyCallback !== undefined) this.readyGauge?.removeCallback(this.readyCallback);
    this.slots = undefined;
    this.readyCallback = undefined;
  }

  /** An attempt was claimed and its handler is about to run. */
  attemptStarted(claim: ClaimedAttempt): void {
    const table = this.table;
    if (table === undefined) return;
    const series = table.seriesOf(claim);
    series.started += 1;
    if (claim.execution.attempt > 1) series.retried += 1;
    // A task that continues a chain keeps the chain's older `available_at` (its place in the queue); it was inserted at `created_at`.
    const claimableAt = Math.max(claim.execution.availableAt, claim.execution.createdAt);
    if (claimableAt <= claim.claimedAt) table.claimDelay.record((claim.claimedAt - claimableAt) / 1000);
  }

  /** An attempt ended; `now` is on the store's clock. */
  attemptEnded(claim: ClaimedAttempt, end: AttemptEnd, now: number): void {
    const table = this.table;
    if (table === undefined) return;
    const series = table.seriesOf(claim);
    if (end.kind === "committed") series.committed += 1;
    else if (end.kind === "released") series.released += 1;
    else {
      const failure = series.failed.get(end.errorType);
      if (failure === undefined) series.failed.set(end.errorType, { attributes: { ...series.attributes, "error.type": end.errorType }, count: 1 });
      else failure.count += 1;
    }
    const seconds = Math.max(0, now - claim.claimedAt) / 1000;
    series.time[end.kind].seconds += seconds;
    table.duration.record(seconds);
  }

  /** A sweep recovered a lapsed lease (`WorkerLost`, `HeartbeatTimeout` or `StepTimeout`). */
  leaseTakenOver(flowType: string, stepType: string, errorType: string): void {
    this.table?.takeovers.add(1, { "perdure.flow.type": flowType, "perdure.step.type": stepType, "error.type": errorType });
  }
}
