/**
 * The agent session's metrics, through the OpenTelemetry metrics API: turns
 * started and ended by outcome, turn duration, approvals and questions
 * pending, and the GenAI client metrics of the semantic conventions
 * (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`).
 *
 * Like the Worker's metrics, `@opentelemetry/api` is loaded with a dynamic
 * import only after something in the process registered an OpenTelemetry
 * global (an SDK's meter provider): a process without OpenTelemetry never
 * resolves it, and every call here is then a cheap no-op.
 */
import type { Attributes, Histogram, Meter, MeterProvider } from "@opentelemetry/api";
import type { ModelCallMetadata } from "../contract/agent-framework-runner.ts";
import type { AgentEventType } from "../contract/values/agent-event.ts";
import type { AgentUsage } from "../contract/values/agent-usage.ts";

/** The instrumentation scope of the session's metrics (the same as its spans). */
export const agentMeterName = "@perdure/agents";

const apiModuleName = "@opentelemetry/api";

/** Where every 1.x copy of `@opentelemetry/api` keeps its registered globals (the API's own key). */
const apiGlobalsKey = Symbol.for("opentelemetry.js.api.1");

/** The GenAI conventions' advised bucket bounds: seconds for the operation duration, tokens for usage. */
const operationDurationBucketsSeconds = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const tokenUsageBuckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** Turns last from seconds to hours (a turn waits for approvals and answers). */
const turnDurationBucketsSeconds = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600];

/** A count kept as a plain number, with the attribute object of its data point made once. */
interface Series {
  readonly attributes: Attributes;
  value: number;
}

/** The GenAI attribute sets of one model call's operation, provider and models, made once. */
interface ModelCallSeries {
  readonly duration: Attributes;
  readonly input: Attributes;
  readonly output: Attributes;
  /** The duration's attributes with each `error.type` seen. */
  readonly failed: Map<string, Attributes>;
}

/** How many distinct attribute sets of each kind a process keeps; past it, recordings build their attributes each time. */
const seriesLimit = 1000;

/**
 * The instruments of one meter and the counts behind its observable ones,
 * shared by every recorder of the process that uses that meter.
 *
 * What a session costs, following the Worker's metrics (ADR
 * `2026-12-07-worker-metrics-off-the-hot-path.md`): turn starts, turn ends
 * and pending interrupts add to plain numbers, which observable
 * instruments report when the meter's reader collects (a scrape, an
 * export); the histograms (turn duration and the GenAI client's operation
 * duration and token usage, whose attributes the semantic conventions
 * require) are recorded with attribute objects made once per attribute set,
 * not built per recording.
 */
class MeterTable {
  readonly turnDuration: Histogram;
  readonly tokenUsage: Histogram;
  readonly operationDuration: Histogram;
  private readonly turnsStarted = new Map<string, Series>();
  private readonly turnsEnded = new Map<string, Series>();
  private readonly interruptsPending = new Map<string, Series>();
  private readonly turnDurationAttributes = new Map<string, Attributes>();
  private readonly modelCalls = new Map<string, ModelCallSeries>();

  constructor(meter: Meter) {
    const started = meter.createObservableCounter("perdure.agent.turns.started", { description: "Agent turns started", unit: "{turn}" });
    const ended = meter.createObservableCounter("perdure.agent.turns.ended", { description: "Agent turns ended, by outcome: completed, failed, steered or cancelled", unit: "{turn}" });
    const pending = meter.createObservableUpDownCounter("perdure.agent.interrupts.pending", { description: "Approvals and questions raised and not yet resolved (sum over the processes that run sessions)", unit: "{interrupt}" });
    this.turnDuration = meter.createHistogram("perdure.agent.turn.duration", { description: "Time from a turn's start to its end, when one process saw both", unit: "s", advice: { explicitBucketBoundaries: turnDurationBucketsSeconds } });
    this.tokenUsage = meter.createHistogram("gen_ai.client.token.usage", { description: "Number of input and output tokens used", unit: "{token}", advice: { explicitBucketBoundaries: tokenUsageBuckets } });
    this.operationDuration = meter.createHistogram("gen_ai.client.operation.duration", { description: "GenAI operation duration", unit: "s", advice: { explicitBucketBoundaries: operationDurationBucketsSeconds } });
    meter.addBatchObservableCallback((observer) => {
      for (const series of this.turnsStarted.values()) observer.observe(started, series.value, series.attributes);
      for (const series of this.turnsEnded.values()) observer.observe(ended, series.value, series.attributes);
      for (const series of this.interruptsPending.values()) observer.observe(pending, series.value, series.attributes);
    }, [started, ended, pending]);
  }

  turnStarted(flowType: string): void {
    seriesOf(this.turnsStarted, flowType, () => ({ "perdure.flow.type": flowType })).value += 1;
  }

  turnEnded(flowType: string, outcome: string, durationSeconds: number | undefined): void {
    const key = [flowType, outcome].join("\u0000");
    const series = seriesOf(this.turnsEnded, key, () => ({ "perdure.flow.type": flowType, "perdure.agent.turn.outcome": outcome }));
    series.value += 1;
    if (durationSeconds !== undefined) this.turnDuration.record(durationSeconds, attributesOf(this.turnDurationAttributes, key, () => series.attributes));
  }

  interruptMoved(flowType: string, kind: string, change: number): void {
    const key = [flowType, kind].join("\u0000");
    seriesOf(this.interruptsPending, key, () => ({ "perdure.flow.type": flowType, "perdure.agent.interrupt.kind": kind })).value += change;
  }

  /** The attribute sets of a model call's operation, provider and models. */
  modelCall(operationName: string, metadata: ModelCallMetadata | undefined): ModelCallSeries {
    const provider = textOf(metadata?.providerName);
    const requestModel = textOf(metadata?.requestModel);
    const responseModel = textOf(metadata?.responseModel);
    const key = [operationName, provider, requestModel, responseModel].join("\u0000");
    const known = this.modelCalls.get(key);
    if (known !== undefined) return known;
    const duration: Attributes = { "gen_ai.operation.name": operationName };
    if (provider !== "") duration["gen_ai.provider.name"] = provider;
    if (requestModel !== "") duration["gen_ai.request.model"] = requestModel;
    if (responseModel !== "") duration["gen_ai.response.model"] = responseModel;
    const series = { duration, input: { ...duration, "gen_ai.token.type": "input" }, output: { ...duration, "gen_ai.token.type": "output" }, failed: new Map<string, Attributes>() };
    if (this.modelCalls.size < seriesLimit) this.modelCalls.set(key, series);
    return series;
  }
}

/** The series under `key`, made on first use (kept while there are fewer than {@link seriesLimit}). */
function seriesOf(table: Map<string, Series>, key: string, attributes: () => Attributes): Series {
  let series = table.get(key);
  if (series === undefined) {
    series = { attributes: attributes(), value: 0 };
    // Past the limit a new series is not kept, so not counted: a process has a handful of Flow types, outcomes and kinds.
    if (table.size < seriesLimit) table.set(key, series);
  }
  return series;
}

function attributesOf(table: Map<string, Attributes>, key: string, make: () => Attributes): Attributes {
  let attributes = table.get(key);
  if (attributes === undefined) {
    attributes = make();
    if (table.size < seriesLimit) table.set(key, attributes);
  }
  return attributes;
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** One table per meter: recorders of one process that share a meter add up instead of overwriting each other's observations. */
const meterTables = new WeakMap<Meter, MeterTable>();

function tableOf(meter: Meter): MeterTable {
  let table = meterTables.get(meter);
  if (table === undefined) {
    table = new MeterTable(meter);
    meterTables.set(meter, table);
  }
  return table;
}

/** The turn outcome each ending event stands for. */
const turnEndOutcomes: Partial<Record<AgentEventType, string>> = {
  turn_completed: "completed",
  turn_failed: "failed",
  turn_steered: "steered",
  turn_cancelled: "cancelled",
};

/** Turn starts remembered for the duration histogram; older ones are dropped first. */
const rememberedTurnStartsLimit = 10_000;

/** One model call of a session Step, as the GenAI client metrics see it. */
export interface ModelCallMeasurement {
  /** `chat` for `RunModel`; the summary call of `CompactContext` is a chat too. */
  operationName: string;
  durationSeconds: number;
  metadata?: ModelCallMetadata | undefined;
  usage?: AgentUsage | undefined;
  /** Set when the call threw. */
  errorType?: string | undefined;
}

/**
 * Records the session metrics of this process; a no-op until an
 * OpenTelemetry meter provider is registered (or given to
 * {@link AgentMetrics.useMeterProvider}).
 */
export class AgentMetrics {
  private table: MeterTable | undefined;
  private loading: Promise<void> | undefined;
  private readonly turnStarts = new Map<string, number>();

  /** Records on `meterProvider` instead of the global one (tests, or a provider the application keeps to itself). */
  useMeterProvider(meterProvider: MeterProvider): void {
    this.table = tableOf(meterProvider.getMeter(agentMeterName));
  }

  /** Forgets the instruments, so the next event looks for a registered provider again (tests). */
  reset(): void {
    this.table = undefined;
    this.loading = undefined;
    this.turnStarts.clear();
  }

  /** The table, loading the API the first time a global provider is seen; undefined while none is. */
  private async ready(): Promise<MeterTable | undefined> {
    if (this.table !== undefined) return this.table;
    this.loading ??= import(apiModuleName).then(
      (api: typeof import("@opentelemetry/api")) => {
        this.table ??= tableOf(api.metrics.getMeter(agentMeterName));
      },
      () => undefined,
    );
    await this.loading;
    return this.table;
  }

  /** Runs `record` now when the instruments are there, after loading them when a global provider is registered, else not at all. */
  private withTable(what: string, record: (table: MeterTable) => void): void {
    const failed = (error: unknown): void => console.debug(`perdure agents metrics: recording ${what} failed:`, error);
    const table = this.table;
    if (table !== undefined) {
      try {
        record(table);
      } catch (error) {
        failed(error);
      }
      return;
    }
    const globals = (globalThis as Record<symbol, { metrics?: unknown } | undefined>)[apiGlobalsKey];
    if (globals?.metrics === undefined) return;
    this.ready().then((loaded) => {
      if (loaded !== undefined) record(loaded);
    }).catch(failed);
  }

  /**
   * A session event was written: turn starts and ends count turns and their
   * duration, `interrupt_raised` / `interrupt_resolved` move the pending
   * approvals and questions. `now` is on the store's clock. An event that a
   * retried attempt writes again is counted again, as the event is.
   */
  eventWritten(flowType: string, flowId: string, type: AgentEventType, turnId: string | null, payload: Record<string, unknown>, now: number): void {
    if (type === "turn_started") {
      this.withTable("an event", (table) => {
        table.turnStarted(flowType);
        this.rememberTurnStart([flowId, turnId ?? ""].join("\u0000"), now);
      });
      return;
    }
    const outcome = turnEndOutcomes[type];
    if (outcome !== undefined) {
      this.withTable("an event", (table) => {
        const key = [flowId, turnId ?? ""].join("\u0000");
        const startedAt = this.turnStarts.get(key);
        if (startedAt !== undefined) this.turnStarts.delete(key);
        table.turnEnded(flowType, outcome, startedAt === undefined ? undefined : Math.max(0, now - startedAt) / 1000);
      });
      return;
    }
    if (type !== "interrupt_raised" && type !== "interrupt_resolved") return;
    const kind = typeof payload.kind === "string" ? payload.kind : "approval";
    this.withTable("an event", (table) => table.interruptMoved(flowType, kind, type === "interrupt_raised" ? 1 : -1));
  }

  /** A model call ended: `gen_ai.client.operation.duration`, and `gen_ai.client.token.usage` per token type when it reported usage. */
  modelCallEnded(measurement: ModelCallMeasurement): void {
    this.withTable("a model call", (table) => {
      const series = table.modelCall(measurement.operationName, measurement.metadata ?? undefined);
      const errorType = measurement.errorType;
      const durationAttributes = errorType === undefined ? series.duration : attributesOf(series.failed, errorType, () => ({ ...series.duration, "error.type": errorType }));
      table.operationDuration.record(measurement.durationSeconds, durationAttributes);
      const usage = measurement.usage;
      if (usage === undefined || usage === null || usage.requests <= 0) return;
      if (usage.inputTokens > 0) table.tokenUsage.record(usage.inputTokens, series.input);
      if (usage.outputTokens > 0) table.tokenUsage.record(usage.outputTokens, series.output);
    });
  }

  private rememberTurnStart(key: string, now: number): void {
    this.turnStarts.delete(key);
    this.turnStarts.set(key, now);
    if (this.turnStarts.size > rememberedTurnStartsLimit) {
      const oldest = this.turnStarts.keys().next().value;
      if (oldest !== undefined) this.turnStarts.delete(oldest);
    }
  }
}

/**
 * The process's session metrics: one recorder, since the instruments live on
 * the process's meter provider.
 */
export const agentMetrics = new AgentMetrics();
