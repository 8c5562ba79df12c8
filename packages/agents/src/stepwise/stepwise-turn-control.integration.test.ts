/**
 * Steering and turn cancellation under Stepwise with the ScriptedModelClient,
 * on a real SQLite engine with a Worker in this process: queued messages
 * with their Channel message IDs, delete_queued_message, steer_user_message
 * by ID and by text, cancel_turn during a model call and during tool calls,
 * and the races the contract lists (answer or approval versus steer, cancel
 * versus final answer, double cancel, a durable wait whose Timer fires first).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { readStepHistory } from "../testing/read-step-history.ts";
import {
  toolCallCancelledBySteeringResult,
  toolCallCancelledByTurnCancellationResult,
  turnCancelledNoteHeader,
} from "../contract/values/result-texts.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "./scripted-model-client.ts";
import type { ModelRequest } from "./model-client.ts";
import { deferred } from "./test-fixtures/deferred.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

/** A read tool that waits for the test to release it, counting its runs. */
function gatedTool(name: string) {
  const started = deferred();
  const release = deferred();
  const runs: string[] = [];
  const tool = functionTool({
    name, description: "Waits for the test.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async (_arguments, context) => {
      runs.push(context.toolCallId);
      started.resolve();
      await release.promise;
      return `${name} finished`;
    },
  });
  return { tool, started, release, runs };
}

function approvalTool(runs: string[]) {
  return functionTool({
    name: "refund", description: "Refunds.", parameters: { type: "object", properties: {} }, effect: "idempotent_write", requiresApproval: true,
    execute: async (_arguments, context) => {
      runs.push(context.toolCallId);
      return "refunded";
    },
  });
}

/** The first model call of `turn-1` makes `calls`; every other call answers with the results it saw. */
function firstTurnCalls(calls: NonNullable<ScriptedModelReply["toolCalls"]>): (request: ModelRequest) => ScriptedModelReply {
  return (request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (request.turnId === "turn-1" && results.length === 0 && !request.input.some((item) => item.type === "tool_result")) {
      return { text: "Working.", toolCalls: calls };
    }
    return { text: `Answer to ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}: ${results.map((result) => result.output).join(" | ")}` };
  };
}

void test("queued messages carry Channel message IDs; delete drops one; steering one waits for the running tool, rejects the approval, and starts a turn with it", async (t) => {
  const slow = gatedTool("slow_lookup");
  const refunds: string[] = [];
  const model = new ScriptedModelClient(firstTurnCalls([{ name: "slow_lookup", id: "slow" }, { name: "refund", id: "refund" }]));
  const flow = createStepwiseAgentSessionFlow({ name: "steer", instructions: "Help.", model, tools: [slow.tool, approvalTool(refunds)] }, "StepwiseSteerQueued");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("s1", { initialMessage: "Check order 7." });
  await slow.started.promise;
  await sessions.waitForPendingInterrupts("s1");
  assert.equal(await sessions.sendUserMessage("s1", "Also check order 8."), true);
  assert.equal(await sessions.sendUserMessage("s1", "And order 9."), true);
  const queued = (await sessions.getAgentSnapshot("s1")).queuedMessages;
  assert.deepEqual(queued.map((message) => message.text), ["Also check order 8.", "And order 9."]);
  assert.ok(queued.every((message) => typeof message.messageId === "string" && message.messageId !== ""), "each queued message has its Channel message ID");
  const [first, second] = queued as [typeof queued[number], typeof queued[number]];

  assert.equal(await sessions.deleteQueuedMessage("s1", second.messageId), true);
  assert.equal(await sessions.deleteQueuedMessage("s1", second.messageId), false, "a message no longer queued");
  assert.equal(await sessions.steerUserMessage("s1", { messageId: first.messageId, text: null }), true);
  assert.equal(await sessions.steerUserMessage("s1", { messageId: first.messageId, text: null }), false, "moved already");
  const steered = await sessions.getAgentSnapshot("s1");
  assert.deepEqual([steered.queuedMessages.length, steered.steeredMessages.map((message) => message.text)], [0, ["Also check order 8."]]);
  // The steer wakes ResumeTurn, which cancels the approval's wait; a late approval then returns false.
  await pollUntil(async () => ((await sessions.getAgentSnapshot("s1")).pendingInterrupts.length === 0 ? true : undefined), { description: "the steer to drop the approval" });
  assert.equal(await sessions.resolveInterrupt("s1", { interruptId: "refund-approval", approved: true }), false, "an approval of a steered turn is gone");
  assert.equal((await sessions.getAgentSnapshot("s1")).state?.activeTurnId, "turn-1", "the started tool holds the turn");

  slow.release.resolve();
  const state = await sessions.waitForTurnCount("s1", 2);
  assert.equal(state.lastTurnError, null);
  const snapshot = await sessions.getAgentSnapshot("s1");
  assert.deepEqual(snapshot.messages.map((message) => [message.turnId, message.role, message.text]), [
    ["turn-1", "user", "Check order 7."],
    ["turn-1", "assistant", "Working."],
    ["turn-1", "tool", "slow_lookup finished"],
    ["turn-1", "tool", toolCallCancelledBySteeringResult],
    ["turn-2", "user", "Also check order 8."],
    ["turn-2", "assistant", "Answer to Also check order 8.: "],
  ]);
  assert.deepEqual(snapshot.messages.map((message) => message.sequence), [1, 2, 3, 4, 5, 6], "sequences have no gaps");
  assert.deepEqual([slow.runs, refunds], [["slow"], []], "the started tool ran once; the rejected call never ran");
  const events = await sessions.readEvents("s1");
  assert.deepEqual(payloadsOf(events, "turn_steered"), [{ steered_message_count: 1, message_count: 3 }]);
  assert.deepEqual(payloadsOf(events, "interrupt_resolved"), [{
    interrupt_id: "refund-approval", kind: "approval", approved: false, answered: false, rejection_message: null, cancellation_reason: "steered",
  }]);
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => [payload.tool_call_id, payload.status]), [["refund", "rejected"], ["slow", "succeeded"]]);
  const history = completedExecutes(await readStepHistory(engine.address, "s1"));
  assert.deepEqual(history.filter((step) => step !== "CallTool"), [
    "StartAgentSession", "RunModel", "ResumeTurn", "AwaitToolApproval", "ResumeTurn", "ApplyTurnControl", "RunModel",
  ], "a steer wake, the approval's cancellation, the turn's end, and one model call for the steered message");
});

void test("steer_user_message with text queues while no turn is active and refuses both, neither, and blank text", async (t) => {
  const model = new ScriptedModelClient((request) => ({ text: `You said: ${ScriptedModelClient.userTexts(request).at(-1) ?? ""}` }));
  const flow = createStepwiseAgentSessionFlow({ name: "idle", instructions: "Echo.", model }, "StepwiseSteerIdle");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("i1");
  await sessions.waitForState("i1", (state) => state.status === "waiting_for_user_message");
  assert.equal(await sessions.steerUserMessage("i1", { messageId: null, text: null }), false, "neither");
  assert.equal(await sessions.steerUserMessage("i1", { messageId: "x", text: "both" }), false, "both");
  assert.equal(await sessions.steerUserMessage("i1", { messageId: null, text: " \u3000" }), false, "blank by Python's str.strip()");
  assert.equal(await sessions.steerUserMessage("i1", { messageId: null, text: "hello" }), true);
  await sessions.waitForTurnCount("i1", 1);
  assert.deepEqual((await sessions.getAgentSnapshot("i1")).messages.map((message) => message.text), ["hello", "You said: hello"]);
  assert.equal(await sessions.cancelTurn("i1"), false, "no turn is active");
  assert.equal((await sessions.getAgentSnapshot("i1")).state?.acceptsTurnControl, true, "a turn of this release accepts turn control");
});

void test("cancel_turn aborts a running model call through cancellationSignal and drops its answer; the session takes the next message", async (t) => {
  const aborted = deferred<string>();
  const modelStarted = deferred();
  const model = new ScriptedModelClient(async (request) => {
    if (request.turnId === "turn-1") {
      modelStarted.resolve();
      await new Promise<void>((resolve) => request.signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted.resolve(String(request.signal.reason));
      return { text: "an answer nobody sees" };
    }
    return { text: `Fresh: ${ScriptedModelClient.userTexts(request).join(" / ")}` };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "stop", instructions: "Help.", model }, "StepwiseCancelModel");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("c1", { initialMessage: "Write a long report." });
  await modelStarted.promise;
  assert.equal(await sessions.cancelTurn("c1", "turn-2"), false, "another turn");
  assert.equal(await sessions.cancelTurn("c1", "turn-1"), true);
  await aborted.promise;
  const ended = await sessions.waitForTurnCount("c1", 1);
  assert.equal(ended.lastTurnError, null);
  assert.equal(await sessions.cancelTurn("c1"), false, "the cancelled turn has ended");
  const events = await sessions.readEvents("c1");
  assert.deepEqual(payloadsOf(events, "turn_cancelled"), [{ message_count: 1 }], "the turn stored its note");
  assert.deepEqual(payloadsOf(events, "turn_completed"), []);
  // The dropped answer is not stored; the note that the user stopped the turn is, after the (empty) transcript.
  assert.deepEqual((await sessions.getAgentSnapshot("c1")).messages.map((message) => [message.role, message.text]), [["user", "Write a long report."], ["system", turnCancelledNoteHeader]]);

  assert.equal(await sessions.sendUserMessage("c1", "A short one, please."), true);
  await sessions.waitForTurnCount("c1", 2);
  // The next model call sees that the first request was stopped, between it and the new one.
  const nextInput = JSON.stringify(model.requests.at(-1)?.input ?? []);
  assert.ok(nextInput.indexOf("Write a long report.") < nextInput.indexOf(turnCancelledNoteHeader) && nextInput.indexOf(turnCancelledNoteHeader) < nextInput.indexOf("A short one, please."), `the next model input: ${nextInput}`);
  const history = completedExecutes(await readStepHistory(engine.address, "c1"));
  assert.deepEqual(history, ["StartAgentSession", "FinishTurnCancellation", "ApplyTurnControl", "AwaitUserMessage", "RunModel"]);
});

void test("cancel_turn during tool calls: the running tool runs to its end; the approval, the question and the durable wait record rejected with turn_cancelled; a second cancel changes nothing", async (t) => {
  const slow = gatedTool("slow_lookup");
  const refunds: string[] = [];
  const model = new ScriptedModelClient(firstTurnCalls([
    { name: "slow_lookup", id: "slow" },
    { name: "refund", id: "refund" },
    { name: "ask_user", id: "ask", arguments: { question: "Which order?" } },
    { name: "durable_wait", id: "wait", arguments: { duration_seconds: 3600, reason: "the courier" } },
  ]));
  const flow = createStepwiseAgentSessionFlow({
    name: "stop-tools", instructions: "Help.", model, tools: [slow.tool, approvalTool(refunds)], builtInTools: ["ask_user", "durable_wait"],
  }, "StepwiseCancelTools");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("c2", { initialMessage: "Sort out order 7." });
  await slow.started.promise;
  await sessions.waitForPendingInterrupts("c2", 2);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("c2")).toolCalls.find((call) => call.toolCallId === "wait")?.status === "waiting_for_timer" ? true : undefined), { description: "the durable wait" });

  assert.equal(await sessions.cancelTurn("c2"), true);
  assert.equal(await sessions.cancelTurn("c2", "turn-1"), true, "a second cancel of the same turn");
  assert.equal(await sessions.answerQuestion("c2", { interruptId: "ask", answer: "7" }), false, "the question is gone");
  await pollUntil(async () => {
    const calls = (await sessions.getAgentSnapshot("c2")).toolCalls;
    return calls.filter((call) => call.status === "rejected").length === 3 ? calls : undefined;
  }, { description: "the three waits to record their cancellation" });
  const waiting = await sessions.getAgentSnapshot("c2");
  assert.equal(waiting.state?.activeTurnId, "turn-1", "the started tool holds the turn until it ends");
  assert.deepEqual(waiting.toolCalls.map((call) => [call.toolCallId, call.status, call.cancellationReason ?? null]), [
    ["slow", "approved", null], ["refund", "rejected", "turn_cancelled"], ["ask", "rejected", "turn_cancelled"], ["wait", "rejected", "turn_cancelled"],
  ]);
  assert.deepEqual(waiting.pendingInterrupts, []);

  slow.release.resolve();
  await sessions.waitForTurnCount("c2", 1);
  const snapshot = await sessions.getAgentSnapshot("c2");
  assert.deepEqual(snapshot.messages.filter((message) => message.role === "tool").map((message) => [message.toolCallId, message.text]), [
    ["slow", "slow_lookup finished"],
    ["refund", toolCallCancelledByTurnCancellationResult],
    ["ask", toolCallCancelledByTurnCancellationResult],
    ["wait", toolCallCancelledByTurnCancellationResult],
  ]);
  const events = await sessions.readEvents("c2");
  assert.equal(payloadsOf(events, "turn_cancelled").length, 1);
  assert.deepEqual(payloadsOf(events, "interrupt_resolved").map((payload) => [payload.interrupt_id, payload.cancellation_reason]).sort(), [["ask", "turn_cancelled"], ["refund-approval", "turn_cancelled"]]);
  const history = completedExecutes(await readStepHistory(engine.address, "c2"));
  assert.equal(history.filter((step) => step === "FinishTurnCancellation").length, 1, "the second cancel moved nothing");
  assert.equal(history.filter((step) => step === "RunModel").length, 1, "no model call after the cancellation");
  assert.deepEqual([slow.runs, refunds], [["slow"], []]);

  assert.equal(await sessions.sendUserMessage("c2", "What happened?"), true);
  await sessions.waitForTurnCount("c2", 2);
  const next = model.requests.at(-1);
  assert.ok(next?.input.some((item) => item.type === "tool_result" && item.output === toolCallCancelledByTurnCancellationResult), "the next model call sees the cancelled calls' results");
});

void test("cancel_turn racing a final answer: the turn either completes and cancel returns false, or it is cancelled and the answer dropped", async (t) => {
  for (const round of [1, 2, 3]) {
    const release = deferred();
    const started = deferred();
    const model = new ScriptedModelClient(async () => {
      started.resolve();
      await release.promise;
      return { text: "the final answer" };
    });
    const flow = createStepwiseAgentSessionFlow({ name: "race", instructions: "Answer.", model }, `StepwiseCancelRace${round}`);
    const { sessions } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("r1", { initialMessage: "Question?" });
    await started.promise;
    release.resolve();
    const cancelled = await sessions.cancelTurn("r1");
    await sessions.waitForTurnCount("r1", 1);
    const events = await sessions.readEvents("r1");
    const texts = (await sessions.getAgentSnapshot("r1")).messages.map((message) => message.text);
    if (cancelled) {
      // Events are written before the commit, so a model call cancelled after it wrote turn_completed leaves that event; the stored turn is what counts.
      assert.deepEqual([payloadsOf(events, "turn_cancelled").length, texts], [1, ["Question?", turnCancelledNoteHeader]]);
    } else {
      assert.deepEqual([payloadsOf(events, "turn_cancelled").length, payloadsOf(events, "turn_completed").length, texts], [0, 1, ["Question?", "the final answer"]]);
    }
    assert.equal(await sessions.cancelTurn("r1"), false, "nothing is active afterwards");
  }
});

void test("answer_question that commits before a steer is the ask_user call's result; after the steer, answering returns false", async (t) => {
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    const last = ScriptedModelClient.userTexts(request).at(-1) ?? "";
    if (results.length > 0 || last.startsWith("steer")) return { text: `Done: ${results.map((result) => result.output).join(" | ")}` };
    return { toolCalls: [{ name: "ask_user", id: `ask-${request.turnId}`, arguments: { question: "Which size?" } }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "ask-steer", instructions: "Ask.", model, builtInTools: ["ask_user"] }, "StepwiseAnswerVersusSteer");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("a1", { initialMessage: "Order a shirt." });
  await sessions.waitForPendingInterrupts("a1");
  assert.equal(await sessions.answerQuestion("a1", { interruptId: "ask-turn-1", answer: "M" }), true);
  assert.equal(await sessions.steerUserMessage("a1", { messageId: null, text: "steer: blue" }), true);
  await sessions.waitForTurnCount("a1", 2);
  const first = await sessions.getAgentSnapshot("a1");
  assert.deepEqual(first.messages.filter((message) => message.turnId === "turn-1" && message.role === "tool").map((message) => message.text), ['{"status":"answered","answer":"M"}']);

  assert.equal(await sessions.sendUserMessage("a1", "Order socks."), true);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("a1")).pendingInterrupts[0]?.interruptId === "ask-turn-3" ? true : undefined), { description: "the third turn's question" });
  assert.equal(await sessions.steerUserMessage("a1", { messageId: null, text: "steer: never mind" }), true);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("a1")).pendingInterrupts.length === 0 ? true : undefined), { description: "the steer to drop the question" });
  assert.equal(await sessions.answerQuestion("a1", { interruptId: "ask-turn-3", answer: "L" }), false);
  await sessions.waitForTurnCount("a1", 4);
  const last = await sessions.getAgentSnapshot("a1");
  assert.deepEqual(last.messages.filter((message) => message.turnId === "turn-3" && message.role === "tool").map((message) => message.text), [toolCallCancelledBySteeringResult]);
  assert.deepEqual(last.messages.filter((message) => message.turnId === "turn-4").map((message) => message.text), ["steer: never mind", "Done: "]);
});

void test("a durable wait whose Timer fires before the steer keeps its own result", async (t) => {
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (request.turnId !== "turn-1" || results.length > 0) return { text: `Done: ${results.map((result) => result.output).join(" | ")}` };
    return { toolCalls: [{ name: "durable_wait", id: "wait", arguments: { duration_seconds: 86_400, reason: "tomorrow" } }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "wait-steer", instructions: "Wait.", model, builtInTools: ["durable_wait"] }, "StepwiseTimerVersusSteer");
  const { environment, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("w1", { initialMessage: "Wait a day." });
  await pollUntil(async () => ((await environment.client.describe("w1")).executions.some((execution) => execution.stepType === "AwaitTimer" && execution.status === "waiting") ? true : undefined), { description: "AwaitTimer to wait" });
  // The steer follows the skip at once: the Timer is due before the steer commits, so it wins the wait even when
  // the steer's ResumeTurn commits its cancellation before a Worker fires the Timer (a due Timer counts as fired).
  assert.equal(await sessions.skipTimer("w1", "wait"), 1);
  assert.equal(await sessions.steerUserMessage("w1", { messageId: null, text: "Actually, now." }), true);
  await sessions.waitForTurnCount("w1", 2);
  const snapshot = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(snapshot.messages.filter((message) => message.role === "tool").map((message) => message.text), ['{"status":"completed","waited_seconds":86400,"reason":"tomorrow"}']);
});

void test("an approval that commits before a steer moves its call on: the tool either started first and ran once, or its Step records it steered and it never runs", async (t) => {
  for (const round of [1, 2, 3]) {
    const refunds: string[] = [];
    const model = new ScriptedModelClient(firstTurnCalls([{ name: "refund", id: "refund" }]));
    const flow = createStepwiseAgentSessionFlow({ name: "approve-steer", instructions: "Help.", model, tools: [approvalTool(refunds)] }, `StepwiseApprovalVersusSteer${round}`);
    const { sessions } = await startStepwiseTestAgent(t, [flow]);
    await sessions.start("p1", { initialMessage: "Refund order 7." });
    await sessions.waitForPendingInterrupts("p1");
    assert.equal(await sessions.resolveInterrupt("p1", { interruptId: "refund-approval", approved: true }), true);
    assert.equal(await sessions.steerUserMessage("p1", { messageId: null, text: "Refund order 8 instead." }), true);
    await sessions.waitForTurnCount("p1", 2);
    const [result] = (await sessions.getAgentSnapshot("p1")).messages.filter((message) => message.role === "tool").map((message) => message.text);
    if (refunds.length === 1) assert.equal(result, "refunded");
    else assert.deepEqual([refunds, result], [[], toolCallCancelledBySteeringResult]);
    const events = await sessions.readEvents("p1");
    assert.deepEqual(payloadsOf(events, "interrupt_resolved").map((payload) => [payload.approved, payload.cancellation_reason]), [[true, null]], "the approval kept its own resolution");
  }
});

void test("a queued plan-mode message steered by its ID keeps planMode, so the follow-up turn plans", async (t) => {
  const slow = gatedTool("slow_lookup");
  const model = new ScriptedModelClient((request) => {
    if (request.turnId === "turn-1" && !request.input.some((item) => item.type === "tool_result")) return { toolCalls: [{ name: "slow_lookup", id: "slow" }] };
    return { text: `Tools offered: ${request.tools.map((tool) => tool.name).join(",")}` };
  });
  const flow = createStepwiseAgentSessionFlow({
    name: "plan-steer", instructions: "Plan.", model, tools: [slow.tool], builtInTools: ["write_todos"], planModeEnabled: true,
  }, "StepwiseSteerPlanMode");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("m1", { initialMessage: "Look something up." });
  await slow.started.promise;
  assert.equal(await sessions.sendUserMessage("m1", "Plan the migration.", { planMode: true }), true);
  const [queued] = (await sessions.getAgentSnapshot("m1")).queuedMessages;
  assert.equal(queued?.planMode, true);
  assert.equal(await sessions.steerUserMessage("m1", { messageId: queued?.messageId ?? "", text: null }), true);
  assert.equal((await sessions.getAgentSnapshot("m1")).steeredMessages[0]?.planMode, true);
  slow.release.resolve();
  const state = await sessions.waitForTurnCount("m1", 2);
  assert.equal(state.interactionMode, "planning");
  assert.equal((await sessions.getAgentSnapshot("m1")).messages.at(-1)?.text, "Tools offered: write_todos");
});
