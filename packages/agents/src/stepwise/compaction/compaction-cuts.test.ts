/**
 * Stepwise's cut rules as pure functions: where a transcript may be cut, the
 * cutoff for a retained budget, the summary request's omission, and the
 * texts the Python core shares.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ContextSummaryRequest } from "../../contract/agent-framework-runner.ts";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import { compactionCutIndexes } from "./compaction-cut-points.ts";
import { buildContextSummaryOmissionNote, contextSummaryNoteHeader, contextSummaryPrompt } from "./context-summary-texts.ts";
import { selectStepwiseCompactionCutoff } from "./select-compaction-cutoff.ts";
import { buildSummaryModelRequest } from "./summary-request.ts";
import { estimateModelRequestTokens } from "./token-estimate.ts";

function message(sequence: number, frameworkItem: Record<string, unknown>): AgentMessage {
  const role = frameworkItem.type === "user_text" ? "user" : frameworkItem.type === "tool_result" ? "tool" : "assistant";
  return { role, text: "", frameworkItem, sequence, turnId: "turn-1", createdAt: "" };
}

const user = (sequence: number, text = "question") => message(sequence, { type: "user_text", text });
const output = (sequence: number, callIds: string[], text = "") => message(sequence, {
  type: "model_output", provider: "p", api: "a", item: null, text, tool_calls: callIds.map((id) => ({ id, name: "lookup", arguments: "{}" })),
});
const result = (sequence: number, callId: string, text = "found") => message(sequence, { type: "tool_result", tool_call_id: callId, tool_name: "lookup", output: text });

/** user, a response with two calls and their results, a response with one call and its result, the answer, then a response waiting on a result. */
const transcript: AgentMessage[] = [
  user(1), output(2, ["a", "b"]), result(3, "a"), result(4, "b"), output(5, ["c"]), result(6, "c"), output(7, [], "answer"), user(8), output(9, ["d"]),
];

void test("a cut falls only where every earlier call has its result and no result follows, never after the last message", () => {
  // After 1 (before a response), 4 (a and b answered), 6, 7 (before the next user text); not inside a response, not at 8 (d is open after 9).
  assert.deepEqual(compactionCutIndexes(transcript), [0, 3, 5, 6, 7]);
  assert.deepEqual(compactionCutIndexes([user(1)]), [], "one message is never cut");
  assert.deepEqual(compactionCutIndexes([user(1), output(2, ["x"])]), [0]);
});

void test("the cutoff is the earliest allowed cut whose later messages fit the budget, else the latest allowed cut", () => {
  assert.equal(selectStepwiseCompactionCutoff(transcript, 1_000_000), 1, "everything fits: summarize only up to the first allowed cut");
  assert.equal(selectStepwiseCompactionCutoff(transcript, 0), 8, "nothing fits: summarize as much as is allowed");
  assert.equal(selectStepwiseCompactionCutoff([user(1)], 0), null);
});

void test("a summary request over the window leaves out the oldest messages up to an allowed cut and starts with the omission note", () => {
  const long = "x".repeat(400);
  const messages = [user(1, long), output(2, ["a", "b"]), result(3, "a", long), result(4, "b", long), output(5, [], long), user(6, "short")];
  const base: Omit<ContextSummaryRequest, "inputTokenBudget"> = {
    flowId: "f", turnId: "turn-1", attempt: 1, previousSummary: { summary: "before", lastSequence: 0, generation: 1, turnId: "turn-1", createdAt: "" },
    messages, throughSequence: 6, sessionSettings: {}, interactionMode: "chat",
    events: { write: async () => undefined, textDelta: async () => undefined, reasoningDelta: async () => undefined },
    cancellationSignal: new AbortController().signal, deadline: new Date(), stepExecutionId: "e", heartbeat: async () => undefined,
  };
  const whole = buildSummaryModelRequest({ ...base, inputTokenBudget: 100_000 }, undefined, estimateModelRequestTokens);
  assert.equal(whole.omittedCount, 0);
  assert.deepEqual(whole.modelRequest.input[0], { type: "user_text", text: `${contextSummaryNoteHeader}\nbefore` });
  assert.deepEqual(whole.modelRequest.input.at(-1), { type: "user_text", text: contextSummaryPrompt });
  assert.deepEqual(whole.modelRequest.tools, []);

  // Room for the last two messages only, once 200 output tokens are reserved: the response with two calls goes whole.
  const budget = estimateModelRequestTokens(buildSummaryModelRequest({ ...base, messages: messages.slice(4), inputTokenBudget: 100_000 }, undefined, estimateModelRequestTokens).modelRequest) + 200 + 60;
  const cut = buildSummaryModelRequest({ ...base, inputTokenBudget: budget }, { maxOutputTokens: 200 }, estimateModelRequestTokens);
  assert.equal(cut.omittedCount, 4);
  assert.deepEqual(cut.modelRequest.input.slice(0, 2).map((item) => (item.type === "user_text" ? item.text : item.type)), [`${contextSummaryNoteHeader}\nbefore`, buildContextSummaryOmissionNote(4)]);
  assert.deepEqual(cut.modelRequest.input.slice(2, -1), messages.slice(4).map((entry) => entry.frameworkItem));
});

void test("the omission note counts the messages left out", () => {
  assert.equal(buildContextSummaryOmissionNote(1), "[Perdure] 1 earlier message was left out of this summary because it did not fit in the context window.");
  assert.equal(buildContextSummaryOmissionNote(12), "[Perdure] 12 earlier messages were left out of this summary because they did not fit in the context window.");
  assert.throws(() => buildContextSummaryOmissionNote(0), RangeError);
  assert.equal(contextSummaryNoteHeader, "[Perdure] Summary of the earlier conversation:");
});
