/**
 * How activations chain: overlapping approvals each get their own root and
 * their tools follow their own record, a steered turn, a queued turn and an
 * expired approval deadline link to the root before them, and a sampled-out
 * root stores its context so the rest of its activation is dropped with it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SpanStatusCode } from "@opentelemetry/api";
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { startSessionHarness, waitForTurns, type SessionHarness } from "../session/test-fixtures/session-harness.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import type { ScriptInput, ScriptReply } from "../testing/scripted-agent-runner.ts";
import { enableAsyncContext, parentSpanIdOf, startInMemoryTracing, traceParentOf, type InMemoryTracing } from "./test-fixtures/in-memory-tracing.ts";
import { TracedSessionRunner } from "./test-fixtures/traced-session-runner.ts";

/** Turn 1 asks for two approved refunds at once; later turns answer in text. */
function twoRefundsThenAnswer(input: ScriptInput): ScriptReply {
  if (input.turnId !== "turn-1") return { text: `Noted: ${input.userTexts.at(-1) ?? ""}` };
  if (input.modelCall === 1) return { toolCalls: [{ name: "refund_order", arguments: { order_id: "A" } }, { name: "refund_order", arguments: { order_id: "B" } }] };
  return { text: `Done: ${input.previousResults.map((call) => call.output).join(", ")}` };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((resolvePromise) => { resolve = resolvePromise; });
  return { promise, resolve };
}

/** A session Flow whose refund of order B, on its first attempt, waits for `releaseB` and then fails, so a retry follows. */
function refundFlow(flowType: string, tracerProvider: BasicTracerProvider) {
  const startedB = deferred();
  const releaseB = deferred();
  const runner = new TracedSessionRunner(twoRefundsThenAnswer, {
    refund_order: {
      effect: "idempotent_write",
      requiresApproval: true,
      execute: async (args, call) => {
        if (args.order_id === "B" && call.attempt === 1) {
          startedB.resolve();
          await releaseB.promise;
          throw new Error("the refund service timed out");
        }
        return `refunded ${String(args.order_id)}`;
      },
    },
  });
  return { flow: createAgentSessionFlow(runner, flowType, { tracing: { tracerProvider, agentName: "Refunds" } }), startedB, releaseB };
}

function toolSpansOf(tracing: InMemoryTracing, toolCallId: string): ReadableSpan[] {
  return tracing.spansNamed("execute_tool refund_order").filter((span) => span.attributes["gen_ai.tool.call.id"] === toolCallId);
}

function linkedTo(span: ReadableSpan): string[] {
  return span.links.map((link) => `${link.context.traceId}/${link.context.spanId}`);
}

function idOf(span: ReadableSpan): string {
  return `${span.spanContext().traceId}/${span.spanContext().spanId}`;
}

async function withHarness<TResult>(flows: Parameters<typeof startSessionHarness>[0], body: (harness: SessionHarness) => Promise<TResult>): Promise<TResult> {
  const harness = await startSessionHarness(flows);
  try {
    return await body(harness);
  } finally {
    await harness.dispose();
  }
}

describe("activation roots and their links", () => {
  it("two approvals answered out of order: each root links to the one before, and a tool retried after the later approval stays under its own approval's root", async () => {
    const tracing = startInMemoryTracing();
    const { flow, startedB, releaseB } = refundFlow("TracedOverlap", tracing.provider);
    try {
      await withHarness([flow], async (harness) => {
        const sessions = new AgentSessionTestClient(harness.client, flow);
        await sessions.startSession("s1", { initialMessage: "Refund A and B." });
        await sessions.waitForPendingInterrupts("s1", 2);
        // B is approved first and its first attempt parks; A's approval then starts a newer activation, and B's retry starts after it.
        await sessions.resolveInterrupt("s1", { interruptId: "turn-1-call-1-1-approval", approved: true });
        await startedB.promise;
        await sessions.resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
        await pollUntil(() => toolSpansOf(tracing, "turn-1-call-1-0")[0], { timeoutMs: 10_000, description: "the refund of A to end" });
        const [storedWhileBRuns] = await harness.client.getAttributes("s1", flow.agentTraceContext);
        releaseB.resolve();
        await waitForTurns(harness, "s1", 1);
        await sessions.sendUserMessage("s1", "Thanks.");
        await waitForTurns(harness, "s1", 2);

        const roots = tracing.spansNamed("invoke_agent Refunds");
        assert.deepEqual(roots.map((root) => root.attributes["perdure.step.type"]), ["StartAgentSession", "AwaitToolApproval", "AwaitToolApproval", "AwaitUserMessage"]);
        const [startRoot, approvalB, approvalA, nextTurn] = roots as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
        assert.equal(new Set(roots.map((root) => root.spanContext().traceId)).size, 4, "each activation is a trace of its own");
        for (const root of roots) assert.equal(parentSpanIdOf(root), undefined);
        assert.deepEqual(linkedTo(startRoot), []);
        assert.deepEqual(linkedTo(approvalB), [idOf(startRoot)]);
        assert.deepEqual(linkedTo(approvalA), [idOf(approvalB)]);
        assert.deepEqual(linkedTo(nextTurn), [idOf(approvalA)]);
        assert.equal(storedWhileBRuns, traceParentOf(approvalA));

        // B's retry started while A's root was the stored one; both of B's attempts parent from B's record.
        const [toolA] = toolSpansOf(tracing, "turn-1-call-1-0");
        const toolB = toolSpansOf(tracing, "turn-1-call-1-1");
        assert.ok(toolA !== undefined);
        assert.deepEqual(toolB.map((span) => [span.attributes["perdure.step.attempt"], span.status.code, parentSpanIdOf(span), span.spanContext().traceId]), [
          [1, SpanStatusCode.ERROR, approvalB.spanContext().spanId, approvalB.spanContext().traceId],
          [2, SpanStatusCode.UNSET, approvalB.spanContext().spanId, approvalB.spanContext().traceId],
        ]);
        assert.equal(toolB[0]?.attributes["perdure.step.execution_id"], toolB[1]?.attributes["perdure.step.execution_id"]);
        assert.equal(parentSpanIdOf(toolA), approvalA.spanContext().spanId);
        assert.equal(toolA.attributes["perdure.step.type"], "CallTool");

        // The model calls join the activation stored when they ran: the start's, the latest approval's, the next turn's.
        const chats = tracing.spansNamed("chat gpt-test");
        assert.deepEqual(chats.map((chat) => [parentSpanIdOf(chat), chat.attributes["perdure.agent.turn.id"]]), [
          [startRoot.spanContext().spanId, "turn-1"],
          [approvalA.spanContext().spanId, "turn-1"],
          [nextTurn.spanContext().spanId, "turn-2"],
        ]);
        assert.equal(nextTurn.attributes["perdure.agent.turn.id"], "turn-2");
      });
    } finally {
      releaseB.resolve();
      await tracing.shutdown();
    }
  });

  it("a steered message ends the waiting turn, and ApplyTurnControl's root for the new turn links to the first turn's root", async () => {
    const tracing = startInMemoryTracing();
    const { flow } = refundFlow("TracedSteer", tracing.provider);
    try {
      await withHarness([flow], async (harness) => {
        const sessions = new AgentSessionTestClient(harness.client, flow);
        await sessions.startSession("s1", { initialMessage: "Refund A and B." });
        await sessions.waitForPendingInterrupts("s1", 2);
        assert.equal(await sessions.steerUserMessage("s1", { messageId: null, text: "Never mind, just check them." }), true);
        await waitForTurns(harness, "s1", 2);
        const roots = tracing.spansNamed("invoke_agent Refunds");
        assert.deepEqual(roots.map((root) => [root.attributes["perdure.step.type"], root.attributes["perdure.agent.turn.id"]]), [
          ["StartAgentSession", "turn-1"],
          ["ApplyTurnControl", "turn-2"],
        ]);
        const [startRoot, steeredRoot] = roots as [ReadableSpan, ReadableSpan];
        assert.deepEqual(linkedTo(steeredRoot), [idOf(startRoot)]);
        assert.equal(tracing.spansNamed("execute_tool refund_order").length, 0, "no refund ran");
        const lastChat = tracing.spansNamed("chat gpt-test").at(-1);
        assert.equal(lastChat?.attributes["perdure.agent.turn.id"], "turn-2");
        assert.equal(parentSpanIdOf(lastChat!), steeredRoot.spanContext().spanId);
        const [stored] = await harness.client.getAttributes("s1", flow.agentTraceContext);
        assert.equal(stored, traceParentOf(steeredRoot));
      });
    } finally {
      await tracing.shutdown();
    }
  });

  it("an approved single-attempt write gets a CallSingleAttemptTool span under its approval's root, and an expired approval deadline starts an activation of its own", async () => {
    const tracing = startInMemoryTracing();
    const runner = new TracedSessionRunner((input) => input.modelCall === 1
      ? { toolCalls: [{ name: "charge_card", arguments: { order_id: "A" } }, { name: "charge_card", arguments: { order_id: "B" } }] }
      : { text: `Charged: ${input.previousResults.map((call) => `${call.toolCallId}=${call.status}`).join(", ")}` }, {
      charge_card: { effect: "non_idempotent_write", execute: async (args) => `charged ${String(args.order_id)}` },
    });
    const flow = createAgentSessionFlow(runner, "TracedDeadline", { interruptDeadlineMs: 3_600_000, tracing: { tracerProvider: tracing.provider, agentName: "Charges" } });
    try {
      await withHarness([flow], async (harness) => {
        const sessions = new AgentSessionTestClient(harness.client, flow);
        await sessions.startSession("s1", { initialMessage: "Charge A and B." });
        await sessions.waitForPendingInterrupts("s1", 2);
        await sessions.resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
        await pollUntil(() => tracing.spansNamed("execute_tool charge_card")[0], { timeoutMs: 10_000, description: "the charge of A to end" });
        assert.equal(await harness.client.skipTimer("s1", "deadline"), 1, "only B's approval still waits on its deadline");
        await waitForTurns(harness, "s1", 1);

        const roots = tracing.spansNamed("invoke_agent Charges");
        assert.deepEqual(roots.map((root) => root.attributes["perdure.step.type"]), ["StartAgentSession", "AwaitToolApproval", "AwaitToolApproval"]);
        const [startRoot, approvalA, deadlineB] = roots as [ReadableSpan, ReadableSpan, ReadableSpan];
        assert.deepEqual(linkedTo(deadlineB), [idOf(approvalA)]);
        const tools = tracing.spansNamed("execute_tool charge_card");
        assert.deepEqual(tools.map((span) => [span.attributes["perdure.step.type"], span.attributes["gen_ai.tool.call.id"], parentSpanIdOf(span)]), [
          ["CallSingleAttemptTool", "turn-1-call-1-0", approvalA.spanContext().spanId],
        ]);
        const chats = tracing.spansNamed("chat gpt-test");
        assert.deepEqual(chats.map((chat) => parentSpanIdOf(chat)), [startRoot.spanContext().spanId, deadlineB.spanContext().spanId]);
        const snapshot = await sessions.getAgentSnapshot("s1");
        assert.equal(snapshot.messages.at(-1)?.text, "Charged: turn-1-call-1-0=succeeded, turn-1-call-1-1=rejected");
      });
    } finally {
      await tracing.shutdown();
    }
  });

  it("a sampled-out root still stores its traceparent (flags 00), so a parent-based sampler drops the whole activation, tools included", async () => {
    enableAsyncContext();
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const { flow, releaseB } = refundFlow("TracedSampledOut", provider);
    releaseB.resolve();
    try {
      await withHarness([flow], async (harness) => {
        const sessions = new AgentSessionTestClient(harness.client, flow);
        await sessions.startSession("s1", { initialMessage: "Refund A and B." });
        await sessions.waitForPendingInterrupts("s1", 2);
        const [storedAtStart] = await harness.client.getAttributes("s1", flow.agentTraceContext);
        assert.match(storedAtStart ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
        const [record] = await harness.client.getAttributes("s1", flow.agentToolCalls.instance("turn-1-call-1-0"));
        assert.equal(record?.traceContext, storedAtStart);
        await sessions.resolveInterrupt("s1", { interruptId: "turn-1-call-1-0-approval", approved: true });
        await sessions.resolveInterrupt("s1", { interruptId: "turn-1-call-1-1-approval", approved: true });
        await waitForTurns(harness, "s1", 1);
        const [storedAfter] = await harness.client.getAttributes("s1", flow.agentTraceContext);
        assert.match(storedAfter ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
        assert.notEqual(storedAfter, storedAtStart);
        const snapshot = await sessions.getAgentSnapshot("s1");
        assert.equal(snapshot.messages.at(-1)?.text, "Done: refunded A, refunded B");
        assert.deepEqual(exporter.getFinishedSpans().map((span) => span.name), []);
      });
    } finally {
      await provider.shutdown();
    }
  });
});
