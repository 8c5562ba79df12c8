import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns } from "../session/test-fixtures/session-harness.ts";
import { ToolExecutionError } from "../contract/tool-execution-error.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import type { ScriptInput, ScriptReply } from "../testing/scripted-agent-runner.ts";
import type { AgentTracingOptions } from "./agent-tracing-options.ts";
import { parentSpanIdOf, startInMemoryTracing, traceParentOf, type InMemoryTracing } from "./test-fixtures/in-memory-tracing.ts";
import { TracedSessionRunner, type TracedSessionRunnerOptions } from "./test-fixtures/traced-session-runner.ts";

function lookupThenAnswer(input: ScriptInput): ScriptReply {
  if (input.modelCall === 1) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: "7" } }], text: "Let me look." };
  return { text: `Answer: ${input.previousResults.map((call) => call.output).join(", ")}` };
}

interface ActiveSpans {
  duringModelCalls: (string | undefined)[];
  duringTool: (string | undefined)[];
}

function tracedFlow(flowType: string, tracing: AgentTracingOptions, options: { requiresApproval?: boolean; toolFails?: boolean; runner?: TracedSessionRunnerOptions } = {}) {
  const active: ActiveSpans = { duringModelCalls: [], duringTool: [] };
  const lookupOrder = {
    effect: "read" as const,
    requiresApproval: options.requiresApproval ?? false,
    execute: async (args: Record<string, unknown>) => {
      active.duringTool.push(trace.getActiveSpan()?.spanContext().spanId);
      if (options.toolFails === true) throw new ToolExecutionError("the order service is down");
      return `order ${String(args.order_id)}: shipped`;
    },
  };
  const runner = new TracedSessionRunner((input) => {
    active.duringModelCalls.push(trace.getActiveSpan()?.spanContext().spanId);
    return lookupThenAnswer(input);
  }, { lookup_order: lookupOrder }, options.runner);
  return { flow: createAgentSessionFlow(runner, flowType, { tracing }), active };
}

function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const matching = spans.filter((span) => span.name === name);
  assert.equal(matching.length, 1, `one ${name} span, got ${matching.length}: ${spans.map((span) => span.name).join(", ")}`);
  return matching[0]!;
}

async function withTracing<TResult>(body: (tracing: InMemoryTracing) => Promise<TResult>, tracing = startInMemoryTracing()): Promise<TResult> {
  try {
    return await body(tracing);
  } finally {
    await tracing.shutdown();
  }
}

describe("session tracing", () => {
  it("a turn with an approved tool is two linked traces: the start's root and chat, then the approval's root, execute_tool and chat", () => withTracing(async (tracing) => {
    const { flow, active } = tracedFlow("TracedApproval", { tracerProvider: tracing.provider, agentName: "Support" }, { requiresApproval: true });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await harness.waitForState("s1", (state) => state.status === "running_tools", "the approval to wait");
      const [storedDuringWait] = await harness.client.getAttributes("s1", flow.agentTraceContext);
      const [record] = await harness.client.getAttributes("s1", flow.agentToolCalls.instance("turn-1-call-1-0"));
      const firstRoot = only(tracing.spans(), "invoke_agent Support");
      assert.equal(storedDuringWait, traceParentOf(firstRoot));
      assert.equal(record?.traceContext, traceParentOf(firstRoot));

      await new AgentSessionTestClient(harness.client, flow).resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
      await waitForTurns(harness, "s1", 1);
      await pollUntil(() => tracing.spansNamed("chat gpt-test").length === 2 ? true : undefined, { timeoutMs: 10_000, description: "two chat spans" });

      const spans = tracing.spans();
      const roots = tracing.spansNamed("invoke_agent Support");
      assert.equal(roots.length, 2);
      const [startRoot, approvalRoot] = roots as [ReadableSpan, ReadableSpan];
      const [firstChat, secondChat] = tracing.spansNamed("chat gpt-test") as [ReadableSpan, ReadableSpan];
      const tool = only(spans, "execute_tool lookup_order");
      assert.equal(spans.length, 5, spans.map((span) => span.name).join(", "));

      // Trace 1: the start's root and the first model call.
      assert.equal(parentSpanIdOf(startRoot), undefined);
      assert.deepEqual(startRoot.links, []);
      assert.equal(firstChat.spanContext().traceId, startRoot.spanContext().traceId);
      assert.equal(parentSpanIdOf(firstChat), startRoot.spanContext().spanId);
      // Trace 2: the approval's root, linked to the first, with the tool and the second model call under it.
      assert.notEqual(approvalRoot.spanContext().traceId, startRoot.spanContext().traceId);
      assert.equal(parentSpanIdOf(approvalRoot), undefined);
      assert.deepEqual(approvalRoot.links.map((link) => [link.context.traceId, link.context.spanId]), [[startRoot.spanContext().traceId, startRoot.spanContext().spanId]]);
      assert.equal(parentSpanIdOf(tool), approvalRoot.spanContext().spanId);
      assert.equal(tool.spanContext().traceId, approvalRoot.spanContext().traceId);
      assert.equal(parentSpanIdOf(secondChat), approvalRoot.spanContext().spanId);

      // The root ends inside its Step, before the spans that follow it start.
      assert.ok(startRoot.ended && approvalRoot.ended);
      assert.ok(approvalRoot.endTime[0] * 1e9 + approvalRoot.endTime[1] <= tool.startTime[0] * 1e9 + tool.startTime[1]);
      // While a model call runs, the activation's root is the active span; while the tool runs, its execute_tool span is.
      assert.deepEqual(active.duringModelCalls, [startRoot.spanContext().spanId, approvalRoot.spanContext().spanId]);
      assert.deepEqual(active.duringTool, [tool.spanContext().spanId]);

      assert.equal(startRoot.kind, SpanKind.INTERNAL);
      assert.equal(firstChat.kind, SpanKind.CLIENT);
      assert.equal(tool.kind, SpanKind.INTERNAL);
      assert.equal(startRoot.attributes["gen_ai.operation.name"], "invoke_agent");
      assert.equal(firstChat.attributes["gen_ai.operation.name"], "chat");
      assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool");
      for (const span of spans) {
        assert.equal(span.attributes["gen_ai.conversation.id"], "s1", span.name);
        assert.equal(span.attributes["session.id"], "s1", span.name);
        assert.equal(span.attributes["perdure.flow.id"], "s1", span.name);
        // The contract's dex.run.id: a flow ID names one run.
        assert.equal(span.attributes["perdure.run.id"], "s1", span.name);
        assert.equal(span.attributes["gen_ai.agent.name"], "Support", span.name);
        assert.equal(span.attributes["perdure.agent.turn.id"], "turn-1", span.name);
        assert.equal(span.attributes["perdure.step.attempt"], 1, span.name);
        assert.equal(typeof span.attributes["perdure.step.execution_id"], "string", span.name);
        assert.equal(span.instrumentationScope.name, "@perdure/agents");
        assert.equal(span.instrumentationScope.schemaUrl, "https://opentelemetry.io/schemas/1.42.0-dev");
      }
      assert.deepEqual([startRoot, firstChat, approvalRoot, tool, secondChat].map((span) => span.attributes["perdure.step.type"]), [
        "StartAgentSession", "RunModel", "AwaitToolApproval", "CallTool", "RunModel",
      ]);
      assert.equal(tool.attributes["gen_ai.tool.name"], "lookup_order");
      assert.equal(tool.attributes["gen_ai.tool.call.id"], "turn-1-call-1-0");
      assert.deepEqual(firstChat.attributes["perdure.agent.requested_tool_call.ids"], ["turn-1-call-1-0"]);
      assert.equal(firstChat.attributes["gen_ai.request.model"], "gpt-test");
      assert.equal(firstChat.attributes["gen_ai.response.model"], "gpt-test-2026-11");
      assert.equal(firstChat.attributes["gen_ai.provider.name"], "openai");
      assert.equal(firstChat.attributes["gen_ai.response.id"], "resp-turn-1-1");
      assert.deepEqual(firstChat.attributes["gen_ai.response.finish_reasons"], ["tool_calls"]);
      assert.equal(firstChat.attributes["gen_ai.usage.input_tokens"], 120);
      assert.equal(firstChat.attributes["gen_ai.usage.output_tokens"], 30);
      assert.equal(firstChat.attributes["gen_ai.usage.cache_read.input_tokens"], 64);
      assert.equal(firstChat.attributes["gen_ai.usage.reasoning.output_tokens"], 8);
      const [storedAfterTurn] = await harness.client.getAttributes("s1", flow.agentTraceContext);
      assert.equal(storedAfterTurn, traceParentOf(approvalRoot));
    } finally {
      await harness.dispose();
    }
  }));

  it("a retried RunModel emits one chat span per attempt, sharing the execution ID; the failed one has status ERROR and error.type", () => withTracing(async (tracing) => {
    const { flow } = tracedFlow("TracedRetry", { tracerProvider: tracing.provider }, { runner: { failingModelCalls: 1 } });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await waitForTurns(harness, "s1", 1);
      const root = only(tracing.spans(), "invoke_agent TracedRetry");
      const failed = only(tracing.spans(), "chat");
      const chats = tracing.spansNamed("chat gpt-test");
      assert.equal(chats.length, 2);
      const retried = chats.find((span) => span.attributes["perdure.step.attempt"] === 2)!;
      assert.equal(failed.attributes["perdure.step.attempt"], 1);
      assert.equal(failed.attributes["perdure.step.execution_id"], retried.attributes["perdure.step.execution_id"]);
      assert.equal(failed.status.code, SpanStatusCode.ERROR);
      assert.equal(failed.attributes["error.type"], "ProviderUnavailableError");
      assert.equal(failed.kind, SpanKind.INTERNAL);
      assert.equal(failed.attributes["gen_ai.usage.input_tokens"], undefined);
      assert.equal(retried.status.code, SpanStatusCode.UNSET);
      assert.equal(retried.attributes["gen_ai.response.id"], "resp-turn-1-2");
      for (const span of [failed, ...chats]) assert.equal(parentSpanIdOf(span), root.spanContext().spanId);
      assert.notEqual(chats[0]!.attributes["perdure.step.execution_id"], chats[1]!.attributes["perdure.step.execution_id"]);
    } finally {
      await harness.dispose();
    }
  }));

  it("without content capture, spans carry message keys and tool call IDs only; with it, messages, tool arguments and results", async () => {
    const observed: Record<string, ReadableSpan[]> = {};
    for (const capture of [false, true]) {
      await withTracing(async (tracing) => {
        const { flow } = tracedFlow(`TracedContent${String(capture)}`, { tracerProvider: tracing.provider, shouldCaptureMessageContent: capture });
        const harness = await startSessionHarness([flow]);
        try {
          await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
          await waitForTurns(harness, "s1", 1);
          observed[String(capture)] = tracing.spans();
        } finally {
          await harness.dispose();
        }
      });
    }
    const contentKeys = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];
    for (const capture of ["false", "true"]) {
      const spans = observed[capture]!;
      const [firstChat, secondChat] = spans.filter((span) => span.name === "chat gpt-test") as [ReadableSpan, ReadableSpan];
      const tool = only(spans, "execute_tool lookup_order");
      const root = spans.find((span) => span.name.startsWith("invoke_agent"))!;
      assert.equal(root.attributes["perdure.agent.input_messages.last_key"], "000000000001");
      assert.equal(firstChat.attributes["perdure.agent.input_messages.last_key"], "000000000001");
      assert.deepEqual(firstChat.attributes["perdure.agent.output_messages.keys"], ["000000000002"]);
      assert.equal(secondChat.attributes["perdure.agent.input_messages.last_key"], "000000000002");
      assert.deepEqual(secondChat.attributes["perdure.agent.output_messages.keys"], ["000000000003", "000000000004"]);
      assert.equal(tool.attributes["gen_ai.tool.call.id"], "turn-1-call-1-0");
      if (capture === "false") {
        for (const span of spans) for (const key of contentKeys) assert.equal(span.attributes[key], undefined, `${span.name} ${key}`);
        continue;
      }
      assert.deepEqual(JSON.parse(firstChat.attributes["gen_ai.input.messages"] as string), [{ role: "user", parts: [{ type: "text", content: "Where is order 7?" }] }]);
      assert.deepEqual(JSON.parse(firstChat.attributes["gen_ai.output.messages"] as string), [{
        role: "assistant",
        parts: [{ type: "text", content: "Let me look." }, { type: "tool_call", id: "turn-1-call-1-0", name: "lookup_order", arguments: { order_id: "7" } }],
        finish_reason: "tool_calls",
      }]);
      assert.deepEqual(JSON.parse(secondChat.attributes["gen_ai.output.messages"] as string), [{
        role: "assistant", parts: [{ type: "text", content: "Answer: order 7: shipped" }], finish_reason: "stop",
      }]);
      assert.equal(tool.attributes["gen_ai.tool.call.arguments"], JSON.stringify({ order_id: "7" }));
      assert.equal(tool.attributes["gen_ai.tool.call.result"], "order 7: shipped");
    }
  });

  it("convention 1.36.0 names the provider gen_ai.system, has no cache or reasoning counts and no content, and sets its schema URL", () => withTracing(async (tracing) => {
    const { flow } = tracedFlow("TracedOld", { tracerProvider: tracing.provider, semanticConventionsVersion: "1.36.0", shouldCaptureMessageContent: true });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await waitForTurns(harness, "s1", 1);
      const spans = tracing.spans();
      assert.equal(spans.length, 4);
      const chat = tracing.spansNamed("chat gpt-test")[0]!;
      assert.equal(chat.attributes["gen_ai.system"], "openai");
      assert.equal(chat.attributes["gen_ai.provider.name"], undefined);
      assert.equal(chat.attributes["gen_ai.usage.input_tokens"], 120);
      assert.equal(chat.attributes["gen_ai.usage.cache_read.input_tokens"], undefined);
      assert.equal(chat.attributes["gen_ai.usage.reasoning.output_tokens"], undefined);
      for (const span of spans) {
        assert.equal(span.instrumentationScope.schemaUrl, "https://opentelemetry.io/schemas/1.36.0");
        for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) {
          assert.equal(span.attributes[key], undefined, `${span.name} ${key}`);
        }
      }
    } finally {
      await harness.dispose();
    }
  }));

  it("a tool that throws ToolExecutionError ends its execute_tool span with status ERROR and error.type ToolExecutionError", () => withTracing(async (tracing) => {
    const { flow } = tracedFlow("TracedToolFailure", { tracerProvider: tracing.provider }, { toolFails: true });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await waitForTurns(harness, "s1", 1);
      const tool = only(tracing.spans(), "execute_tool lookup_order");
      assert.equal(tool.status.code, SpanStatusCode.ERROR);
      assert.equal(tool.status.message, "the order service is down");
      assert.equal(tool.attributes["error.type"], "ToolExecutionError");
      assert.equal(tool.attributes["perdure.step.type"], "CallTool");
      assert.equal(tracing.spansNamed("chat gpt-test").length, 2);
    } finally {
      await harness.dispose();
    }
  }));

  it("a runner that reports several model calls gets an INTERNAL chat span without usage", () => withTracing(async (tracing) => {
    const usage = { inputTokens: 500, outputTokens: 90, totalTokens: 590, reasoningTokens: 0, cachedInputTokens: 0, requests: 3 };
    const { flow } = tracedFlow("TracedHarness", { tracerProvider: tracing.provider }, { runner: { usage } });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await waitForTurns(harness, "s1", 1);
      const chats = tracing.spansNamed("chat gpt-test");
      assert.equal(chats.length, 2);
      for (const chat of chats) {
        assert.equal(chat.kind, SpanKind.INTERNAL);
        assert.deepEqual(Object.keys(chat.attributes).filter((key) => key.startsWith("gen_ai.usage.")), []);
      }
    } finally {
      await harness.dispose();
    }
  }));

  it("a span processor that throws never fails a Step: the turn completes as without tracing and the error is logged once as a warning", async (t) => {
    const warn = t.mock.method(console, "warn", () => undefined);
    const debug = t.mock.method(console, "debug", () => undefined);
    const throwing = {
      onStart: () => {
        throw new Error("span processor exploded");
      },
      onEnd: () => {
        throw new Error("span processor exploded at end");
      },
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    };
    await withTracing(async () => {
      const tracing = startInMemoryTracing([throwing]);
      const { flow } = tracedFlow("TracedThrowing", { tracerProvider: tracing.provider }, { requiresApproval: true });
      const harness = await startSessionHarness([flow]);
      try {
        await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
        await harness.waitForState("s1", (state) => state.status === "running_tools", "the approval to wait");
        await new AgentSessionTestClient(harness.client, flow).resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
        const state = await waitForTurns(harness, "s1", 1);
        assert.equal(state.lastTurnError, null);
        const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s1");
        assert.deepEqual(snapshot.messages.map((message) => message.text), ["Where is order 7?", "Let me look.", "order 7: shipped", "Answer: order 7: shipped"]);
        const history = await harness.client.getStepHistory("s1");
        assert.deepEqual(history.filter((entry) => entry.status !== "completed").map((entry) => [entry.stepType, entry.error]), []);
        const tracingWarnings = warn.mock.calls.filter((call) => String(call.arguments[0]).startsWith("perdure agents tracing"));
        assert.equal(tracingWarnings.length, 1);
        assert.ok(debug.mock.calls.some((call) => String(call.arguments[0]).startsWith("perdure agents tracing")));
      } finally {
        await harness.dispose();
        await tracing.shutdown();
      }
    });
  });

  it("with the API but no SDK, spans are no-ops and the session stores no trace context", async () => {
    assert.equal(trace.getTracer("probe").startSpan("probe").isRecording(), false, "this test needs a process without a global tracer provider");
    const { flow } = tracedFlow("TracedNoSdk", {}, { requiresApproval: true });
    const harness = await startSessionHarness([flow]);
    try {
      await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
      await harness.waitForState("s1", (state) => state.status === "running_tools", "the approval to wait");
      const [storedDuringWait] = await harness.client.getAttributes("s1", flow.agentTraceContext);
      const [record] = await harness.client.getAttributes("s1", flow.agentToolCalls.instance("turn-1-call-1-0"));
      assert.equal(storedDuringWait, undefined);
      assert.ok(record !== undefined);
      assert.equal(record.traceContext, undefined);
      await new AgentSessionTestClient(harness.client, flow).resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
      await waitForTurns(harness, "s1", 1);
      const [storedAfterTurn] = await harness.client.getAttributes("s1", flow.agentTraceContext);
      assert.equal(storedAfterTurn, undefined);
    } finally {
      await harness.dispose();
    }
  });

  it("refuses invalid tracing options with an error naming the value", () => {
    const runner = new TracedSessionRunner(lookupThenAnswer, {});
    const cases: [AgentTracingOptions, RegExp][] = [
      [{ isEnabled: "yes" as unknown as boolean }, /tracing.isEnabled "yes" is invalid: use true or false/],
      [{ semanticConventionsVersion: "1.37.0" as "1.36.0" }, /tracing.semanticConventionsVersion "1.37.0" is invalid: use "1.42.0-dev" or "1.36.0"/],
      [{ tracerProvider: {} as never }, /tracing.tracerProvider is invalid/],
      [{ agentName: " " }, /tracing.agentName " " is invalid/],
      [{ shouldCaptureMessageContent: 1 as unknown as boolean }, /tracing.shouldCaptureMessageContent 1 is invalid/],
    ];
    for (const [tracing, message] of cases) assert.throws(() => createAgentSessionFlow(runner, "Invalid", { tracing }), message);
  });
});
