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
import type { Attributes, Counter, Histogram, Meter, MeterProvider, UpDownCounter } from "@opentelemetry/api";
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

interface Instruments {
  turnsStarted: Counter;
  turnsEnded: Counter;
  turnDuration: Histogram;
  interruptsPending: UpDownCounter;
  tokenUsage: Histogram;
  operationDuration: Histogram;
}

function instrumentsOf(meter: Meter): Instruments {
  return {
    turnsStarted: meter.createCounter("perdure.agent.turns.started", { description: "Agent turns started", unit: "{turn}" }),
    turnsEnded: meter.createCounter("perdure.agent.turns.ended", { description: "Agent turns ended, by outcome: completed, failed, steered or cancelled", unit: "{turn}" }),
    turnDuration: meter.createHistogram("perdure.agent.turn.duration", { description: "Time from a turn's start to its end, when one process saw both", unit: "s", advice: { explicitBucketBoundaries: turnDurationBucketsSeconds } }),
    interruptsPending: meter.createUpDownCounter("perdure.agent.interrupts.pending", { description: "Approvals and questions raised and not yet resolved (sum over the processes that run sessions)", unit: "{interrupt}" }),
    tokenUsage: meter.createHistogram("gen_ai.client.token.usage", { description: "Number of input and output tokens used", unit: "{token}", advice: { explicitBucketBoundaries: tokenUsageBuckets } }),
    operationDuration: meter.createHistogram("gen_ai.client.operation.duration", { description: "GenAI operation duration", unit: "s", advice: { explicitBucketBoundaries: operationDurationBucketsSeconds } }),
  };
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
  private instruments: Instruments | undefined;
  private loading: Promise<void> | undefined;
  private readonly turnStarts = new Map<string, number>();

  /** Records on `meterProvider` instead of the global one (tests, or a provider the application keeps to itself). */
  useMeterProvider(meterProvider: MeterProvider): void {
    this.instruments = instrumentsOf(meterProvider.getMeter(agentMeterName));
  }

  /** Forgets the instruments, so the next event looks for a registered provider again (tests). */
  reset(): void {
    this.instruments = undefined;
    this.loading = undefined;
    this.turnStarts.clear();
  }

  /** The instruments, loading the API the first time a global provider is seen; undefined while none is. */
  private async ready(): Promise<Instruments | undefined> {
    if (this.instruments !== undefined) return this.instruments;
    const globals = (globalThis as Record<symbol, { metrics?: unknown } | undefined>)[apiGlobalsKey];
    if (globals?.metrics === undefined) return undefined;
    this.loading ??= import(apiModuleName).then(
      (api: typeof import("@opentelemetry/api")) => {
        this.instruments ??= instrumentsOf(api.metrics.getMeter(agentMeterName));
      },
      () => undefined,
    );
    await this.loading;
    return this.instruments;
  }

  /**
   * A session event was written: turn starts and ends count turns and their
   * duration, `interrupt_raised` / `interrupt_resolved` move the pending
   * approvals and questions. `now` is on the store's clock. An event that a
   * retried attempt writes again is counted again, as the event is.
   */
  eventWritten(flowType: string, flowId: string, type: AgentEventType, turnId: string | null, payload: Record<string, unknown>, now: number): void {
    if (type !== "turn_started" && turnEndOutcomes[type] === undefined && type !== "interrupt_raised" && type !== "interrupt_resolved") return;
    this.recordEvent(flowType, flowId, type, turnId, payload, now).catch((error: unknown) => console.debug("perdure agents metrics: recording an event failed:", error));
  }

  private async recordEvent(flowType: string, flowId: string, type: AgentEventType, turnId: string | null, payload: Record<string, unknown>, now: number): Promise<void> {
    const instruments = this.instruments ?? (await this.ready());
    if (instruments === undefined) return;
    const attributes: Attributes = { "perdure.flow.type": flowType };
    if (type === "turn_started") {
      instruments.turnsStarted.add(1, attributes);
      this.rememberTurnStart(`${flowId}\u0000${turnId ?? ""}`, now);
      return;
    }
    const outcome = turnEndOutcomes[type];
    if (outcome !== undefined) {
      instruments.turnsEnded.add(1, { ...attributes, "perdure.agent.turn.outcome": outcome });
      const key = `${flowId}\u0000${turnId ?? ""}`;
      const startedAt = this.turnStarts.get(key);
      if (startedAt !== undefined) {
        this.turnStarts.delete(key);
        instruments.turnDuration.record(Math.max(0, now - startedAt) / 1000, { ...attributes, "perdure.agent.turn.outcome": outcome });
      }
      return;
    }
    const kind = typeof payload.kind === "string" ? payload.kind : "approval";
    instruments.interruptsPending.add(type === "interrupt_raised" ? 1 : -1, { ...attributes, "perdure.agent.interrupt.kind": kind });
  }

  /** A model call ended: `gen_ai.client.operation.duration`, and `gen_ai.client.token.usage` per token type when it reported usage. */
  modelCallEnded(measurement: ModelCallMeasurement): void {
    this.recordModelCall(measurement).catch((error: unknown) => console.debug("perdure agents metrics: recording a model call failed:", error));
  }

  private async recordModelCall(measurement: ModelCallMeasurement): Promise<void> {
    const instruments = this.instruments ?? (await this.ready());
    if (instruments === undefined) return;
    const attributes: Attributes = { "gen_ai.operation.name": measurement.operationName, ...modelAttributes(measurement.metadata) };
    instruments.operationDuration.record(measurement.durationSeconds, measurement.errorType === undefined ? attributes : { ...attributes, "error.type": measurement.errorType });
    const usage = measurement.usage;
    if (usage === undefined || usage === null || usage.requests <= 0) return;
    if (usage.inputTokens > 0) instruments.tokenUsage.record(usage.inputTokens, { ...attributes, "gen_ai.token.type": "input" });
    if (usage.outputTokens > 0) instruments.tokenUsage.record(usage.outputTokens, { ...attributes, "gen_ai.token.type": "output" });
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

function modelAttributes(metadata: ModelCallMetadata | undefined): Attributes {
  if (metadata === undefined || metadata === null) return {};
  const attributes: Attributes = {};
  if (typeof metadata.providerName === "string" && metadata.providerName !== "") attributes["gen_ai.provider.name"] = metadata.providerName;
  if (typeof metadata.requestModel === "string" && metadata.requestModel !== "") attributes["gen_ai.request.model"] = metadata.requestModel;
  if (typeof metadata.responseModel === "string" && metadata.responseModel !== "") attributes["gen_ai.response.model"] = metadata.responseModel;
  return attributes;
}

/**
 * The process's session metrics: one recorder, since the instruments live on
 * the process's meter provider.
 */
export const agentMetrics = new AgentMetrics();
