/**
 * The `chat` spans of a Stepwise agent on the AI SDK model client: named and
 * described from what the AI SDK reports, for `RunModel` and for the
 * `CompactContext` summary call alike, with tracing set on the agent
 * definition.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createAiSdkModelClient } from "../ai-sdk/index.ts";
import { contextSummaryInstructions } from "../stepwise/compaction/context-summary-texts.ts";
import { createStepwiseAgentSessionFlow } from "../stepwise/create-stepwise-agent-session-flow.ts";
import { finishPart, scriptedLanguageModel, textParts, type LanguageModelStreamPart } from "../stepwise/test-fixtures/stepwise-scripted-language-model.ts";
import { startStepwiseTestAgent } from "../stepwise/test-fixtures/stepwise-test-agent.ts";
import { messageSequenceKey } from "../contract/values/agent-message.ts";
import { parentSpanIdOf, startInMemoryTracing } from "./test-fixtures/in-memory-tracing.ts";

const filler = "The customer asked about the delivery window of a parcel and the refund policy for damaged goods. ";

test("a Stepwise agent on the AI SDK client names its chat spans from the AI SDK's metadata, and CompactContext's summary call gets a chat span of its own under the turn's root", { timeout: 300_000 }, async (t) => {
  const tracing = startInMemoryTracing();
  t.after(() => tracing.shutdown());
  let summaryCalls = 0;
  let answerCalls = 0;
  const languageModel = scriptedLanguageModel({ provider: "anthropic.messages", modelId: "claude-test" }, (facts, options): LanguageModelStreamPart[] => {
    const system = options.prompt[0];
    if (system?.role === "system" && system.content === contextSummaryInstructions) {
      summaryCalls += 1;
      return [{ type: "response-metadata", id: `summary-${summaryCalls}`, modelId: "claude-test-20260101" }, ...textParts("s", [`SUMMARY ${summaryCalls}`]), finishPart("stop", { input: 400, output: 9 })];
    }
    answerCalls += 1;
    return [{ type: "response-metadata", id: `msg-${answerCalls}`, modelId: "claude-test-20260101" }, ...textParts("a", [`Answer to ${facts.lastUserText.slice(0, 12)}: ${filler}`]), finishPart("stop", { input: 50, output: 30 })];
  });
  const flow = createStepwiseAgentSessionFlow({
    name: "compacting",
    instructions: "Answer.",
    model: createAiSdkModelClient(languageModel),
    compaction: { contextWindowTokens: 1_000 },
    tracing: { tracerProvider: tracing.provider, agentName: "Compacting", shouldCaptureMessageContent: true },
  }, "TracedCompactingAgent");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.startSession("c1", { initialMessage: `question 1: ${filler}` });
  await sessions.waitForTurnCount("c1", 1);
  const compactSpans = (): ReadableSpan[] => tracing.spans().filter((span) => span.attributes["perdure.step.type"] === "CompactContext");
  for (let turns = 2; turns <= 12 && compactSpans().length === 0; turns++) {
    await sessions.sendUserMessage("c1", `question ${turns}: ${filler}`);
    await sessions.waitForTurnCount("c1", turns);
  }
  const summary = (await sessions.getAgentSnapshot("c1")).contextSummary;
  assert.ok(summary !== null, "the session compacted within 12 turns");

  const [compact] = compactSpans() as [ReadableSpan];
  assert.equal(compactSpans().length, 1);
  const turnId = summary.turnId;
  const root = tracing.spansNamed("invoke_agent Compacting").find((span) => span.attributes["perdure.agent.turn.id"] === turnId);
  assert.ok(root !== undefined);
  const chats = tracing.spans().filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
  assert.equal(chats.length, answerCalls + summaryCalls);
  assert.deepEqual([...new Set(chats.map((span) => span.name))], ["chat claude-test"]);

  // The summary call: named and described like a model call, under the turn's root, its content the summary.
  assert.equal(compact.name, "chat claude-test");
  assert.equal(compact.kind, SpanKind.CLIENT);
  assert.equal(parentSpanIdOf(compact), root.spanContext().spanId);
  assert.equal(compact.spanContext().traceId, root.spanContext().traceId);
  assert.equal(compact.attributes["perdure.agent.turn.id"], turnId);
  assert.equal(compact.attributes["gen_ai.request.model"], "claude-test");
  assert.equal(compact.attributes["gen_ai.response.model"], "claude-test-20260101");
  assert.equal(compact.attributes["gen_ai.provider.name"], "anthropic");
  assert.equal(compact.attributes["gen_ai.response.id"], "summary-1");
  assert.deepEqual(compact.attributes["gen_ai.response.finish_reasons"], ["stop"]);
  assert.equal(compact.attributes["gen_ai.usage.input_tokens"], 400);
  assert.equal(compact.attributes["gen_ai.usage.output_tokens"], 9);
  assert.equal(compact.attributes["perdure.agent.input_messages.last_key"], messageSequenceKey(summary.lastSequence));
  assert.equal(compact.attributes["perdure.agent.output_messages.keys"], undefined, "a summary is not stored as a message");
  assert.deepEqual(JSON.parse(compact.attributes["gen_ai.output.messages"] as string), [{ role: "assistant", parts: [{ type: "text", content: "SUMMARY 1" }], finish_reason: "stop" }]);
  const summarizedInput = JSON.parse(compact.attributes["gen_ai.input.messages"] as string) as { role: string }[];
  assert.equal(summarizedInput.length, summary.lastSequence);

  // The model calls: the same metadata, one response ID each, and the turn's answer after the summary in the same trace.
  const answers = chats.filter((span) => span.attributes["perdure.step.type"] === "RunModel");
  assert.deepEqual(answers.map((span) => span.attributes["gen_ai.response.id"]), Array.from({ length: answerCalls }, (_unused, index) => `msg-${index + 1}`));
  for (const span of answers) {
    assert.equal(span.kind, SpanKind.CLIENT);
    assert.equal(span.attributes["gen_ai.provider.name"], "anthropic");
    assert.equal(span.attributes["gen_ai.response.model"], "claude-test-20260101");
    assert.equal(span.attributes["gen_ai.usage.input_tokens"], 50);
  }
  const afterSummary = answers.find((span) => span.attributes["perdure.agent.turn.id"] === turnId);
  assert.equal(parentSpanIdOf(afterSummary!), root.spanContext().spanId);
});
