import assert from "node:assert/strict";
import { test } from "node:test";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

/** Collects on demand, as a Prometheus scrape does. */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }

  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }

  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }

  /** Every data point of one metric, by its attributes. */
  async points(name: string): Promise<Array<DataPoint<unknown>>> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as Array<DataPoint<unknown>>);
  }

  /** The counter's value for the data point whose attributes include `attributes`. */
  async value(name: string, attributes: Record<string, string>): Promise<unknown> {
    const points = (await this.points(name)).filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
    assert.ok(points.length <= 1, `one data point of ${name} for ${JSON.stringify(attributes)}`);
    return points[0]?.value;
  }
}

test("a Worker counts Step attempts started, retried, failed and committed, their durations, and its slots, through the OpenTelemetry metrics API", async () => {
  const temporary = createTemporarySqliteStore();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const Flaky = defineStep("Flaky", {
    executeOptions: { retry: { initialIntervalMs: 10, backoffCoefficient: 1, maximumAttempts: 3 } },
    execute: (context) => {
      if (context.attempt === 1) throw new TypeError("the first attempt fails");
      return moveTo("Done", null);
    },
  });
  const Done = defineStep("Done", { execute: () => completeFlow("ok") });
  const flow = defineFlow({ type: "Metered", start: "Flaky", steps: [Flaky, Done] });
  const worker = new Worker({ store: temporary.store, flows: [flow], concurrency: 3, pollIntervalMs: 20, meterProvider, onError: () => undefined });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    await client.start(flow, "metered-1");
    assert.equal((await client.waitForFlow("metered-1", { timeoutMs: 10_000 })).status, "completed");
    const flaky = { "perdure.flow.type": "Metered", "perdure.step.type": "Flaky", "perdure.step.method": "execute" };
    const done = { ...flaky, "perdure.step.type": "Done" };
    assert.equal(await reader.value("perdure.step.started", flaky), 2);
    assert.equal(await reader.value("perdure.step.retried", flaky), 1);
    assert.equal(await reader.value("perdure.step.failed", { ...flaky, "error.type": "TypeError" }), 1);
    assert.equal(await reader.value("perdure.step.committed", flaky), 1);
    assert.equal(await reader.value("perdure.step.started", done), 1);
    assert.equal(await reader.value("perdure.step.retried", done), undefined);
    assert.equal(await reader.value("perdure.step.committed", done), 1);
    // The histograms describe the process's Workers as a whole; perdure.step.time splits the time by Step type and outcome.
    const durations = await reader.points("perdure.step.duration");
    assert.deepEqual(durations.map((point) => [point.attributes, (point.value as Histogram).count]), [[{}, 3]]);
    const times = (await reader.points("perdure.step.time")).map((point) => [point.attributes["perdure.step.type"], point.attributes["perdure.step.outcome"], typeof point.value === "number" && point.value >= 0]);
    assert.deepEqual(times.sort(), [["Done", "committed", true], ["Flaky", "committed", true], ["Flaky", "failed", true]]);
    const delays = await reader.points("perdure.step.claim_delay");
    assert.deepEqual(delays.map((point) => [point.attributes, (point.value as Histogram).count]), [[{}, 3]]);
    assert.equal(await reader.value("perdure.worker.slots.limit", {}), 3);
    assert.equal(await reader.value("perdure.worker.slots.busy", {}), 0);
  } finally {
    await worker.close();
    await meterProvider.shutdown();
    await temporary.dispose();
  }
});

test("the ready-queue depth gauge counts the claimable tasks of the Worker's Flow types that no Worker has claimed", async () => {
  const temporary = createTemporarySqliteStore();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const Hold = defineStep("Hold", { execute: () => completeFlow("ok") });
  const queued = defineFlow({ type: "Queued", start: "Hold", steps: [Hold] });
  // A Worker with no free slot observes the queue without draining it: its slots are taken by a Step that waits.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const Wait = defineStep("Wait", { execute: async () => { await released; return completeFlow("ok"); } });
  const waiting = defineFlow({ type: "Waiting", start: "Wait", steps: [Wait] });
  const worker = new Worker({ store: temporary.store, flows: [waiting, queued], concurrency: 1, pollIntervalMs: 20, meterProvider, onError: () => undefined });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    await client.start(waiting, "waiting-1");
    while (worker.activeCount === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const id of ["queued-1", "queued-2", "queued-3"]) await client.start(queued, id);
    assert.equal(await reader.value("perdure.queue.ready", {}), 3);
    release();
    for (const id of ["queued-1", "queued-2", "queued-3"]) assert.equal((await client.waitForFlow(id, { timeoutMs: 10_000 })).status, "completed");
    assert.equal(await reader.value("perdure.queue.ready", {}), 0);
  } finally {
    release();
    await worker.close();
    await meterProvider.shutdown();
    await temporary.dispose();
  }
});

test("two Workers on one meter provider add up their counts and slots, and a closed Worker's counts stay while its slots go", async () => {
  const temporary = createTemporarySqliteStore();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const Once = defineStep("Once", { execute: () => completeFlow("ok") });
  const flow = defineFlow({ type: "Shared", start: "Once", steps: [Once] });
  const first = new Worker({ store: temporary.store, flows: [flow], concurrency: 2, pollIntervalMs: 20, meterProvider, onError: () => undefined });
  const second = new Worker({ store: temporary.store, flows: [flow], concurrency: 3, pollIntervalMs: 20, meterProvider, onError: () => undefined });
  const client = new Client({ store: temporary.store });
  const runFlows = async (ids: string[]) => {
    for (const id of ids) await client.start(flow, id);
    for (const id of ids) assert.equal((await client.waitForFlow(id, { timeoutMs: 10_000 })).status, "completed");
  };
  const once = { "perdure.step.type": "Once" };
  try {
    await first.start();
    await runFlows(["shared-1", "shared-2"]);
    await second.start();
    assert.equal(await reader.value("perdure.worker.slots.limit", {}), 5);
    await first.close();
    assert.equal(await reader.value("perdure.worker.slots.limit", {}), 3);
    // Only the second Worker runs these: the first one's two stay counted beside them.
    await runFlows(["shared-3", "shared-4"]);
    assert.equal(await reader.value("perdure.step.committed", once), 4);
    assert.equal(await reader.value("perdure.step.started", once), 4);
  } finally {
    await first.close();
    await second.close();
    await meterProvider.shutdown();
    await temporary.dispose();
  }
});
