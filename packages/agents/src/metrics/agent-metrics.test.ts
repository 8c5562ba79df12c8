import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns } from "../session/test-fixtures/session-harness.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import type { ScriptInput, ScriptReply } from "../testing/scripted-agent-runner.ts";
import { TracedSessionRunner, tracedRunnerUsage } from "../tracing/test-fixtures/traced-session-runner.ts";
import { agentMetrics } from "./agent-metrics.ts";

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

  async points(name: string): Promise<Array<DataPoint<unknown>>> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as Array<DataPoint<unknown>>);
  }

  /** The sum of the values (or histogram counts) of the data points whose attributes include `attributes`. */
  async total(name: string, attributes: Record<string, string> = {}, field: "value" | "count" | "sum" = "value"): Promise<number> {
    const points = (await this.points(name)).filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value));
    return points.reduce((sum, point) => sum + (field === "value" ? (point.value as number) : (point.value as Histogram)[field] ?? 0), 0);
  }
}

function lookupThenAnswer(input: ScriptInput): ScriptReply {
  if (input.modelCall === 1) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }], text: "Let me look." };
  return { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` };
}

describe("agent session metrics", () => {
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  agentMetrics.useMeterProvider(meterProvider);
  after(async () => {
    agentMetrics.reset();
    await meterProvider.shutdown();
  });

  it("counts turns started and ended by outcome, pending approvals, and GenAI token usage and operation duration per model call", async () => {
    const lookupOrder = { effect: "read" as const, requiresApproval: true, execute: async (args: Record<string, unknown>) => `order ${String(args.order_id)}: shipped` };
    const runner = new TracedSessionRunner(lookupThenAnswer, { lookup_order: lookupOrder }, { failingModelCalls: 1 });
    const flow = createAgentSessionFlow(runner, "MeteredAgent", { tracing: { isEnabled: false } });
    const harness = await startSessionHarness([flow]);
    try {
      const sessions = new AgentSessionTestClient(harness.client, flow);
      const agent = { "perdure.flow.type": "MeteredAgent" };
      await harness.client.start(flow, "approved", { initial_message: "Where is order 7?" });
      await harness.client.start(flow, "cancelled", { initial_message: "Where is order 7?" });
      await harness.waitForState("approved", (state) => state.status === "running_tools", "the first approval to wait");
      await harness.waitForState("cancelled", (state) => state.status === "running_tools", "the second approval to wait");
      assert.equal(await reader.total("perdure.agent.turns.started", agent), 2);
      assert.equal(await reader.total("perdure.agent.interrupts.pending", { ...agent, "perdure.agent.interrupt.kind": "approval" }), 2);

      await sessions.resolveInterrupt("approved", { interruptId: "turn-1-call-1-0-approval", approved: true });
      await waitForTurns(harness, "approved", 1);
      await sessions.cancelTurn("cancelled");
      await waitForTurns(harness, "cancelled", 1);
      await pollUntil(async () => (await reader.total("perdure.agent.turns.ended", agent)) === 2 ? true : undefined, { timeoutMs: 10_000, description: "both turns to end" });

      assert.equal(await reader.total("perdure.agent.turns.ended", { ...agent, "perdure.agent.turn.outcome": "completed" }), 1);
      assert.equal(await reader.total("perdure.agent.turns.ended", { ...agent, "perdure.agent.turn.outcome": "cancelled" }), 1);
      assert.equal(await reader.total("perdure.agent.interrupts.pending", agent), 0, "both approvals were resolved");
      assert.equal(await reader.total("perdure.agent.turn.duration", agent, "count"), 2, "this process saw both turns start and end");

      // Three model calls answered (two first calls, one after the approval); one attempt threw first and was retried.
      const chat = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test-2026-11" };
      assert.equal(await reader.total("gen_ai.client.operation.duration", chat, "count"), 3);
      assert.equal(await reader.total("gen_ai.client.operation.duration", { "error.type": "ProviderUnavailableError" }, "count"), 1);
      assert.equal(await reader.total("gen_ai.client.token.usage", { ...chat, "gen_ai.token.type": "input" }, "sum"), 3 * tracedRunnerUsage.inputTokens);
      assert.equal(await reader.total("gen_ai.client.token.usage", { ...chat, "gen_ai.token.type": "output" }, "sum"), 3 * tracedRunnerUsage.outputTokens);
      assert.equal(await reader.total("gen_ai.client.token.usage", { ...chat, "gen_ai.token.type": "output" }, "count"), 3);
    } finally {
      await harness.dispose();
    }
  });
});
