/**
 * Compaction end to end with the Stepwise runner on a private SQLite engine
 * and a Worker in this process: the trigger and the cutoff, the summary
 * note, a turn with many tool calls that compacts mid-turn, the omission
 * note, `resolveModel` for summary calls, the events and the usage.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createAgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { AgentStepType } from "../../session/step-types.ts";
import { ScriptedAgentRunner } from "../../testing/scripted-agent-runner.ts";
import { readStepHistory } from "../../testing/read-step-history.ts";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import { outcomeUnknownToolResult } from "../../contract/values/result-texts.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import type { ModelRequest, StepwiseInputItem } from "../model-client.ts";
import { ScriptedModelClient } from "../scripted-model-client.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "../test-fixtures/stepwise-test-agent.ts";
import { buildContextSummaryOmissionNote, contextSummaryInstructions, contextSummaryNoteHeader, contextSummaryPrompt } from "./context-summary-texts.ts";
import { estimateItemTokens } from "./token-estimate.ts";

const filler = "The customer asked about the delivery window of a parcel and the refund policy for damaged goods. ";

function isSummaryRequest(request: ModelRequest): boolean {
  return request.instructions === contextSummaryInstructions;
}

/** The stored items a request carries after the summary note (and before a summary call's prompt). */
function transcriptOf(request: ModelRequest): StepwiseInputItem[] {
  return request.input.filter((item) => !(item.type === "user_text" && (item.text.startsWith(contextSummaryNoteHeader) || item.text === contextSummaryPrompt || item.text.startsWith("[Perdure] ") && item.text.includes("left out of this summary"))));
}

/** Every tool call of a model output is followed by its result (with the real output) before anything else. */
function assertCallsPaired(input: readonly StepwiseInputItem[], where: string): void {
  for (const [index, item] of input.entries()) {
    if (item.type !== "model_output") continue;
    for (const [offset, call] of item.tool_calls.entries()) {
      const result = input[index + 1 + offset];
      assert.ok(result?.type === "tool_result" && result.tool_call_id === call.id, `${where}: call ${call.id} is not followed by its result`);
      assert.notEqual(result.output, outcomeUnknownToolResult, `${where}: call ${call.id} lost its result`);
    }
  }
  const first = input[0];
  assert.ok(first?.type !== "tool_result", `${where}: the input starts with a result separated from its call`);
}

function storedItem(message: AgentMessage): unknown {
  return message.frameworkItem;
}

void test("a session over the trigger summarizes before the model call: RunModel moves to CompactContext and back, and the next input is the summary note plus the messages after it", { timeout: 300_000 }, async (t) => {
  const summaries: number[] = [];
  const model = new ScriptedModelClient((request) => {
    if (isSummaryRequest(request)) {
      summaries.push(request.input.length);
      return { text: `SUMMARY ${summaries.length}` };
    }
    return { text: `Answer to ${ScriptedModelClient.userTexts(request).at(-1)?.slice(0, 12) ?? ""}: ${filler}` };
  }, { maxRecordedRequests: 1000 });
  const flow = createStepwiseAgentSessionFlow({ name: "compacting", instructions: "Answer.", model, compaction: { contextWindowTokens: 1_000 } }, "CompactingAgent");
  const { sessions, engine } = await startStepwiseTestAgent(t, [flow]);
  await sessions.startSession("c1", { initialMessage: `question 1: ${filler}` });
  await sessions.waitForTurnCount("c1", 1);
  let turns = 1;
  while ((await sessions.getAgentSnapshot("c1")).contextSummary === null && turns < 12) {
    turns += 1;
    await sessions.sendUserMessage("c1", `question ${turns}: ${filler}`);
    await sessions.waitForTurnCount("c1", turns);
  }
  const snapshot = await sessions.getAgentSnapshot("c1");
  const summary = snapshot.contextSummary;
  assert.ok(summary !== null, "the session compacted within 12 turns");
  assert.ok(turns >= 3, `compaction waited for the trigger (turn ${turns})`);
  assert.deepEqual({ summary: summary.summary, generation: summary.generation, turnId: summary.turnId }, { summary: "SUMMARY 1", generation: 1, turnId: `turn-${turns}` });

  // The summary call saw every message through the cutoff, and no tools.
  const summaryRequest = model.requests.find(isSummaryRequest) as ModelRequest;
  assert.deepEqual(summaryRequest.tools, []);
  assert.deepEqual(summaryRequest.input.at(-1), { type: "user_text", text: contextSummaryPrompt });
  const summarized = snapshot.messages.filter((message) => message.sequence <= summary.lastSequence);
  assert.deepEqual(transcriptOf(summaryRequest), summarized.map(storedItem));

  // The model call after it: the note first, then exactly the messages after the summary.
  const afterSummary = model.requests[model.requests.indexOf(summaryRequest) + 1] as ModelRequest;
  assert.deepEqual(afterSummary.input[0], { type: "user_text", text: `${contextSummaryNoteHeader}\nSUMMARY 1` });
  const kept = snapshot.messages.filter((message) => message.sequence > summary.lastSequence && message.turnId !== null && message.sequence < snapshot.messages.length);
  assert.deepEqual(afterSummary.input.slice(1), kept.map(storedItem));
  const retainedTokens = kept.reduce((total, message) => total + estimateItemTokens(message.frameworkItem), 0);
  assert.ok(retainedTokens <= 300, `the kept messages fit retainedRatio 0.3 of the window (${retainedTokens} tokens)`);
  assert.equal(snapshot.messages.find((message) => message.sequence === summary.lastSequence + 1)?.role, "user", "the cut falls between whole exchanges");

  // Steps, events and usage.
  const history = await readStepHistory(engine.address, "c1");
  const executes = completedExecutes(history);
  const compactIndex = executes.indexOf(AgentStepType.CompactContext);
  assert.deepEqual(executes.slice(compactIndex - 1, compactIndex + 2), [AgentStepType.RunModel, AgentStepType.CompactContext, AgentStepType.RunModel]);
  const events = await sessions.readEvents("c1");
  assert.deepEqual(payloadsOf(events, "compaction_started"), [{ through_sequence: summary.lastSequence }]);
  assert.deepEqual(payloadsOf(events, "compaction_finished"), [{ generation: 1, through_sequence: summary.lastSequence }]);
  const compactionExecution = events.find((event) => event.type === "compaction_started")?.stepExecutionId;
  const summaryUsage = events.filter((event) => event.type === "usage_recorded" && event.stepExecutionId === compactionExecution);
  assert.equal(summaryUsage.length, 1, "CompactContext records the summary call's usage");
  assert.equal(snapshot.usage.requests, model.requests.length, "every model and summary call is counted once");
  assert.equal(snapshot.state?.status, "waiting_for_user_message");

  // Further turns compact again; the second summary request starts from the first summary.
  for (let extra = 0; extra < 12 && (await sessions.getAgentSnapshot("c1")).contextSummary?.generation === 1; extra += 1) {
    turns += 1;
    await sessions.sendUserMessage("c1", `question ${turns}: ${filler}`);
    await sessions.waitForTurnCount("c1", turns);
  }
  const second = (await sessions.getAgentSnapshot("c1")).contextSummary;
  assert.equal(second?.generation, 2);
  assert.ok((second?.lastSequence ?? 0) > summary.lastSequence);
  const secondRequest = model.requests.filter(isSummaryRequest)[1] as ModelRequest;
  assert.deepEqual(secondRequest.input[0], { type: "user_text", text: `${contextSummaryNoteHeader}\nSUMMARY 1` });
  assert.deepEqual(transcriptOf(secondRequest)[0], storedItem((await sessions.getAgentSnapshot("c1")).messages.find((message) => message.sequence === summary.lastSequence + 1) as AgentMessage));
});

void test("a turn with many tool calls compacts mid-turn without separating a call from its result, and stores every result once", { timeout: 300_000 }, async (t) => {
  const runs: number[] = [];
  const lookup = functionTool<{ step: number }>({
    name: "lookup", description: "Looks up one step.", parameters: { type: "object", properties: { step: { type: "integer" } }, required: ["step"] }, effect: "read",
    execute: async ({ step }) => {
      runs.push(step);
      return `result ${step}: ${filler}${filler}`;
    },
  });
  const model = new ScriptedModelClient((request) => {
    if (isSummaryRequest(request)) return { text: `summary of ${transcriptOf(request).length} items` };
    const last = ScriptedModelClient.toolResults(request).at(-1);
    const step = last === undefined ? 0 : Number(/^result (\d+):/.exec(last.output)?.[1]);
    if (step === 12) return { text: "All twelve steps are done." };
    // Explicit IDs: after a mid-turn compaction the request no longer holds the turn's earlier responses.
    return { toolCalls: [{ name: "lookup", arguments: { step: step + 1 }, id: `lookup-${step + 1}` }] };
  }, { maxRecordedRequests: 1000 });
  const flow = createStepwiseAgentSessionFlow({ name: "many-calls", instructions: "Work.", model, tools: [lookup], compaction: { contextWindowTokens: 1_000 } }, "ManyCallsAgent");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.startSession("m1", { initialMessage: "Run the twelve steps." });
  await sessions.waitForTurnCount("m1", 1, { timeoutMs: 30_000 });

  assert.deepEqual(runs, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "each call ran once, in order");
  const snapshot = await sessions.getAgentSnapshot("m1");
  assert.equal(snapshot.state?.lastTurnError, null);
  assert.deepEqual(snapshot.messages.map((message) => message.role), ["user", ...Array.from({ length: 12 }, () => ["assistant", "tool"]).flat(), "assistant"]);
  assert.deepEqual(snapshot.messages.filter((message) => message.role === "tool").map((message) => message.toolCallId), runs.map((step) => `lookup-${step}`));
  const events = await sessions.readEvents("m1");
  const finished = payloadsOf(events, "compaction_finished");
  assert.ok(finished.length >= 2, `the turn compacted more than once (${finished.length})`);
  for (const payload of finished) {
    const through = payload.through_sequence as number;
    const next = snapshot.messages.find((message) => message.sequence === through + 1);
    assert.equal(next?.role, "assistant", `the cut after ${through} falls before a model response`);
    assert.equal(events.find((event) => event.type === "compaction_finished" && event.payload === payload)?.turnId, "turn-1");
  }
  for (const [index, request] of model.requests.entries()) assertCallsPaired(transcriptOf(request), `request ${index}`);
  assert.equal(snapshot.contextSummary?.generation, finished.length);
});

void test("a summary request that would not fit the window leaves out the oldest messages, whole responses at a time, and says how many", { timeout: 300_000 }, async (t) => {
  const model = new ScriptedModelClient((request) => (isSummaryRequest(request) ? { text: "short summary" } : { text: `Reply: ${filler}${filler}` }), { maxRecordedRequests: 1000 });
  // The summary call reserves 500 output tokens of the 1,000-token window.
  const flow = createStepwiseAgentSessionFlow({
    name: "omitting", instructions: "Answer.", model, modelSettings: { maxOutputTokens: 500 }, compaction: { contextWindowTokens: 1_000, triggerRatio: 0.9, retainedRatio: 0.1 },
  }, "OmittingAgent");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.startSession("o1", { initialMessage: `first ${filler}` });
  await sessions.waitForTurnCount("o1", 1);
  for (let turn = 2; turn <= 12 && (await sessions.getAgentSnapshot("o1")).contextSummary === null; turn += 1) {
    await sessions.sendUserMessage("o1", `next ${turn} ${filler}`);
    await sessions.waitForTurnCount("o1", turn);
  }
  const snapshot = await sessions.getAgentSnapshot("o1");
  assert.ok(snapshot.contextSummary !== null, "the session compacted");
  const summaryRequest = model.requests.find(isSummaryRequest) as ModelRequest;
  const note = summaryRequest.input[0];
  assert.ok(note?.type === "user_text");
  const omitted = Number(/^\[Perdure\] (\d+) earlier messages? w/.exec(note.text)?.[1]);
  assert.ok(omitted >= 1, `the request starts with the omission note: ${note.text}`);
  assert.equal(note.text, buildContextSummaryOmissionNote(omitted));
  // What remains is the messages after the omitted ones, through the cutoff, never starting with a tool result.
  const summarized = snapshot.messages.filter((message) => message.sequence <= (snapshot.contextSummary?.lastSequence ?? 0));
  assert.deepEqual(transcriptOf(summaryRequest), summarized.slice(omitted).map(storedItem));
  assert.notEqual(summarized[omitted]?.role, "tool");
  assert.ok(omitted < summarized.length, "the newest summarized messages stay in the request");
});

void test("a compaction policy with a runner that lacks the compaction methods is refused with a TypeError", () => {
  const runner = new ScriptedAgentRunner(() => ({ text: "hi" }));
  assert.throws(() => createAgentSessionFlow(runner, "NoCompaction", { compaction: { contextWindowTokens: 1_000 } }), (error: unknown) =>
    error instanceof TypeError && error.message === "the compaction option needs a runner with estimateInputTokens, selectCompactionCutoff, summarizeContext; this runner has no estimateInputTokens, selectCompactionCutoff, summarizeContext");
  const partial = Object.assign(new ScriptedAgentRunner(() => ({ text: "hi" })), { estimateInputTokens: () => 1, selectCompactionCutoff: () => null });
  assert.throws(() => createAgentSessionFlow(partial, "PartialCompaction", { compaction: { contextWindowTokens: 1_000 } }), /this runner has no summarizeContext$/);
  assert.doesNotThrow(() => createAgentSessionFlow(runner, "NoPolicy"));
  assert.throws(() => createAgentSessionFlow(runner, "BadWindow", { compaction: { contextWindowTokens: 0 } }), /compaction\.contextWindowTokens 0 is invalid/);
  assert.throws(() => createAgentSessionFlow(runner, "BadRatio", { compaction: { contextWindowTokens: 10, triggerRatio: 1.5 } }), /compaction\.triggerRatio 1\.5 is invalid/);
  assert.throws(() => createAgentSessionFlow(runner, "BadOrder", { compaction: { contextWindowTokens: 10, triggerRatio: 0.3, retainedRatio: 0.5 } }), /retainedRatio 0\.5 is invalid/);
});

void test("resolveModel picks the model of summary calls and estimates from the turn's settings", { timeout: 300_000 }, async (t) => {
  const counted: string[] = [];
  const build = (name: string) => Object.assign(new ScriptedModelClient((request) => (isSummaryRequest(request) ? { text: `${name} summary` } : { text: `${name}: ${filler}` }), { provider: name, maxRecordedRequests: 1000 }), {
    estimateInputTokens: (request: ModelRequest): number => {
      counted.push(name);
      return request.input.length * 200;
    },
  });
  const models = { small: build("small"), large: build("large") };
  const flow = createStepwiseAgentSessionFlow({
    name: "picking", instructions: "Answer.", model: models.small, resolveModel: (settings) => (settings.model === "large" ? models.large : models.small), compaction: { contextWindowTokens: 1_000 },
  }, "PickingCompactionAgent");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.startSession("p1", { initialMessage: "one", sessionSettings: { model: "large" } });
  await sessions.waitForTurnCount("p1", 1);
  for (let turn = 2; turn <= 6 && (await sessions.getAgentSnapshot("p1")).contextSummary === null; turn += 1) {
    await sessions.sendUserMessage("p1", `turn ${turn}`);
    await sessions.waitForTurnCount("p1", turn);
  }
  assert.equal((await sessions.getAgentSnapshot("p1")).contextSummary?.summary, "large summary");
  assert.equal(models.small.requests.length, 0, "no call reached the default model");
  assert.ok(models.large.requests.some(isSummaryRequest));
  assert.ok(counted.length > 0 && counted.every((name) => name === "large"), "the model's own estimate was used, on the resolved model");
});
