/**
 * Questions under Stepwise with the ScriptedModelClient, on a real SQLite
 * engine with a Worker in this process: `ask_user` answered, refused,
 * duplicate, stale, declined, and past its deadline; `null` optional
 * arguments; tools that ask with `ToolInputRequested`, two at once, next to
 * a sibling approval; and the interrupt ID clash.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { readStepHistory } from "../testing/read-step-history.ts";
import type { DeferredToolOutcome } from "../contract/agent-framework-runner.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "./scripted-model-client.ts";
import type { ModelRequest } from "./model-client.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

/** Asks which size, then reports every result it got. */
function askSizeThenReport(argumentsValue: unknown): (request: ModelRequest) => ScriptedModelReply {
  return (request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: `Results: ${results.map((result) => result.output).join(" | ")}` };
    return { text: "One question first.", toolCalls: [{ name: "ask_user", id: `ask-${request.turnId}`, arguments: argumentsValue }] };
  };
}

const sizeQuestion = { question: "Which size?", choices: ["S", "M", "L"] };

void test("ask_user: answer_question refuses bad answers, takes one answer, refuses the duplicate and the stale one, and the model sees it", async (t) => {
  const model = new ScriptedModelClient(askSizeThenReport(sizeQuestion));
  const flow = createStepwiseAgentSessionFlow({ name: "sizes", instructions: "Ask for sizes.", model, builtInTools: ["ask_user"] }, "StepwiseAskUser");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("q1", { initialMessage: "Order a shirt." });
  const [interrupt] = await sessions.waitForPendingInterrupts("q1");
  assert.deepEqual(interrupt && [interrupt.interruptId, interrupt.kind, interrupt.toolCallId, interrupt.toolName, interrupt.question, interrupt.choices, interrupt.allowsFreeText], [
    "ask-turn-1", "question", "ask-turn-1", "ask_user", "Which size?", ["S", "M", "L"], false,
  ], "an ask_user question's interrupt ID is the tool call ID");
  const waiting = await sessions.getAgentSnapshot("q1");
  assert.deepEqual(waiting.toolCalls.map((call) => [call.toolName, call.effect, call.requiresApproval, call.status]), [["ask_user", "read", false, "awaiting_answer"]]);
  assert.deepEqual(model.requests[0]?.tools.map((tool) => tool.name), ["ask_user"], "the runner offers the enabled built-in tool");

  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1", answer: "XL" }), false, "outside the choices");
  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1", answer: " \t\u3000" }), false, "blank by Python's str.strip()");
  assert.equal(await sessions.resolveInterrupt("q1", { interruptId: "ask-turn-1", approved: true }), false, "a question cannot be approved");
  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1-approval", answer: "M" }), false, "not a pending interrupt");
  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1", answer: "M" }), true);
  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1", answer: "L" }), false, "a duplicate answer is refused");
  await sessions.waitForTurnCount("q1", 1);
  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-turn-1", answer: "S" }), false, "a stale answer of an ended turn is refused");

  const answered = '{"status":"answered","answer":"M"}';
  const snapshot = await sessions.getAgentSnapshot("q1");
  assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text]), [
    ["user", "Order a shirt."], ["assistant", "One question first."], ["tool", answered], ["assistant", `Results: ${answered}`],
  ]);
  assert.deepEqual(snapshot.pendingInterrupts, []);
  const events = await sessions.readEvents("q1");
  assert.deepEqual(payloadsOf(events, "interrupt_raised"), [{
    interrupt_id: "ask-turn-1", kind: "question", tool_call_id: "ask-turn-1", tool_name: "ask_user", deadline: null,
    question: "Which size?", choices: ["S", "M", "L"], allows_free_text: false,
  }]);
  assert.deepEqual(payloadsOf(events, "interrupt_resolved"), [{
    interrupt_id: "ask-turn-1", kind: "question", approved: true, answered: true, rejection_message: null, cancellation_reason: null,
  }]);
  assert.deepEqual(payloadsOf(events, "tool_call_finished"), [{ tool_call_id: "ask-turn-1", tool_name: "ask_user", status: "succeeded" }]);
  assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "q1")), ["StartAgentSession", "RunModel", "AwaitQuestionAnswer", "ResumeTurn", "RunModel"]);
});

void test("ask_user: a decline, with and without a message, and a passed deadline each reach the model with the contract's text", async (t) => {
  const model = new ScriptedModelClient(askSizeThenReport({ question: "Your email?", choices: null, allows_free_text: null }));
  const flow = createStepwiseAgentSessionFlow(
    { name: "emails", instructions: "Ask.", model, builtInTools: ["ask_user"], interruptDeadlineMs: 3_600_000 },
    "StepwiseAskUserDeclined",
  );
  const { sessions, environment } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("d1", { initialMessage: "Sign me up." });
  const [free] = await sessions.waitForPendingInterrupts("d1");
  assert.deepEqual([free?.choices, free?.allowsFreeText], [undefined, true], "null optional arguments count as absent: a free-text question");
  assert.ok(free !== undefined && free.deadline !== null && Date.parse(free.deadline) > Date.now() + 3_500_000, "the question has the session's deadline");
  assert.equal(await sessions.resolveInterrupt("d1", { interruptId: "ask-turn-1", approved: false }), true);
  await sessions.waitForTurnCount("d1", 1);

  await sessions.sendUserMessage("d1", "Try again.");
  await sessions.waitForPendingInterrupts("d1");
  assert.equal(await sessions.resolveInterrupt("d1", { interruptId: "ask-turn-2", approved: false, rejectionMessage: "I'd rather not say." }), true);
  await sessions.waitForTurnCount("d1", 2);

  await sessions.sendUserMessage("d1", "Once more.");
  await sessions.waitForPendingInterrupts("d1");
  // SkipTimer fires the question's deadline Timer now instead of in an hour. The question is pending once RunModel
  // commits; the Timer exists once AwaitQuestionAnswer's wait commits, after.
  await pollUntil(async () => ((await environment.client.skipTimer("d1", "deadline")) === 1 ? true : undefined), { description: "the question's deadline Timer" });
  await sessions.waitForTurnCount("d1", 3);
  assert.equal(await sessions.answerQuestion("d1", { interruptId: "ask-turn-3", answer: "a@b.c" }), false, "expired: no longer pending");

  const toolResults = (await sessions.getAgentSnapshot("d1")).messages.filter((message) => message.role === "tool").map((message) => message.text);
  assert.deepEqual(toolResults, ["The user declined to answer.", "I'd rather not say.", "question deadline passed"]);
  const resolved = payloadsOf(await sessions.readEvents("d1"), "interrupt_resolved");
  assert.deepEqual(resolved.map((payload) => [payload.interrupt_id, payload.approved, payload.answered, payload.rejection_message]), [
    ["ask-turn-1", false, false, null], ["ask-turn-2", false, false, "I'd rather not say."], ["ask-turn-3", false, false, "question deadline passed"],
  ]);
  const finished = payloadsOf(await sessions.readEvents("d1"), "tool_call_finished");
  assert.deepEqual(finished.map((payload) => payload.status), ["rejected", "rejected", "rejected"]);
});

void test("ask_user with invalid arguments fails in RunModel's commit with `invalid ask_user arguments: <reason>`, and no Step waits", async (t) => {
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
    return {
      toolCalls: [
        { name: "ask_user", id: "bad-1", arguments: { question: "\u2028 " } },
        { name: "ask_user", id: "bad-2", arguments: { question: "Pick", choices: ["A", 2] } },
        { name: "ask_user", id: "bad-3", arguments: { question: "Pick", allows_free_text: false } },
        { name: "ask_user", id: "bad-4", arguments: "{not json" },
      ],
    };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "bad", instructions: "Ask.", model, builtInTools: ["ask_user"] }, "StepwiseAskUserInvalid");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("i1", { initialMessage: "Go." });
  await sessions.waitForTurnCount("i1", 1);
  const results = (await sessions.getAgentSnapshot("i1")).messages.filter((message) => message.role === "tool").map((message) => message.text);
  assert.deepEqual(results, [
    "invalid ask_user arguments: question must be a non-blank string, got '\\u2028 '",
    "invalid ask_user arguments: every choice must be a non-blank string, got 2",
    "invalid ask_user arguments: allows_free_text is false, so choices must be given",
    "invalid ask_user arguments: the arguments are not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
  ]);
  assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "i1")), ["StartAgentSession", "RunModel", "ResumeTurn", "RunModel"]);
});

void test("two tools of one response ask at once, both are answerable, each runs again with its answer; a sibling approval resolved meanwhile never reappears", async (t) => {
  const runs: { tool: string; answers: (string | null)[]; continuation: string | undefined }[] = [];
  const askingTool = (name: string, question: string) => functionTool({
    name, description: `The ${name} tool.`, parameters: { type: "object", properties: {} }, effect: "read",
    execute: (_arguments, context): DeferredToolOutcome | string => {
      runs.push({ tool: name, answers: context.inputAnswers.map((answer) => answer.answer), continuation: context.inputContinuation });
      const [answer] = context.inputAnswers;
      if (answer === undefined) return { kind: "tool_input_requested", question, continuation: `${name}-step-1` };
      return `${name} uses ${answer.answer ?? ""}`;
    },
  });
  let archiveRuns = 0;
  const archive = functionTool({
    name: "archive", description: "Archive.", parameters: { type: "object", properties: {} }, effect: "non_idempotent_write",
    execute: () => { archiveRuns += 1; return "archived"; },
  });
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => `${result.toolName}: ${result.output}`).join(" | ") };
    return { toolCalls: [{ name: "pick_color", id: "c1" }, { name: "pick_font", id: "f1" }, { name: "archive", id: "a1" }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "design", instructions: "Design.", model, tools: [askingTool("pick_color", "Which color?"), askingTool("pick_font", "Which font?"), archive] }, "StepwiseToolQuestions");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("t1", { initialMessage: "Make a poster." });
  const pending = await sessions.waitForPendingInterrupts("t1", 3);
  assert.deepEqual(pending.map((interrupt) => [interrupt.interruptId, interrupt.kind, interrupt.question ?? null]).sort(), [
    ["a1-approval", "approval", null], ["c1-input-1", "question", "Which color?"], ["f1-input-1", "question", "Which font?"],
  ]);
  const asking = await sessions.getAgentSnapshot("t1");
  assert.deepEqual(asking.toolCalls.map((call) => [call.toolCallId, call.status, call.inputQuestion ?? null, call.inputContinuation ?? null]), [
    ["c1", "awaiting_answer", "Which color?", "pick_color-step-1"], ["f1", "awaiting_answer", "Which font?", "pick_font-step-1"], ["a1", "awaiting_approval", null, null],
  ]);
  assert.equal(await sessions.resolveInterrupt("t1", { interruptId: "a1-approval", approved: true }), true);
  // Both questions are answerable, in either order.
  assert.equal(await sessions.answerQuestion("t1", { interruptId: "f1-input-1", answer: "Serif" }), true);
  assert.equal(await sessions.answerQuestion("t1", { interruptId: "c1-input-1", answer: "Teal" }), true);
  await sessions.waitForTurnCount("t1", 1);

  assert.deepEqual(runs.filter((run) => run.tool === "pick_color"), [
    { tool: "pick_color", answers: [], continuation: undefined }, { tool: "pick_color", answers: ["Teal"], continuation: "pick_color-step-1" },
  ]);
  assert.deepEqual(runs.filter((run) => run.tool === "pick_font").map((run) => run.answers), [[], ["Serif"]]);
  assert.equal(archiveRuns, 1);
  const snapshot = await sessions.getAgentSnapshot("t1");
  assert.equal(snapshot.messages.at(-1)?.text, "pick_color: pick_color uses Teal | pick_font: pick_font uses Serif | archive: archived");
  const raised = payloadsOf(await sessions.readEvents("t1"), "interrupt_raised").map((payload) => payload.interrupt_id);
  assert.deepEqual([...raised].sort(), ["a1-approval", "c1-input-1", "f1-input-1"], "each interrupt is raised once; the approval never again");
  const history = await readStepHistory(engine.address, "t1");
  assert.equal(completedExecutes(history).filter((step) => step === "AwaitQuestionAnswer").length, 4, "per question: raise, then wait for the answer");
  assert.equal(completedExecutes(history).filter((step) => step === "CallTool").length, 4, "each asking tool ran twice");
});

void test("a sibling approval resolved while a tool runs never reappears as pending when the tool then asks", async (t) => {
  const toolGate = Promise.withResolvers<void>();
  t.after(() => toolGate.resolve());
  let started = 0;
  const slowAsker = functionTool({
    name: "slow_asker", description: "Asks after a while.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async (_arguments, context): Promise<DeferredToolOutcome | string> => {
      if (context.inputAnswers.length > 0) return `got ${context.inputAnswers[0]?.answer ?? ""}`;
      started += 1;
      await toolGate.promise;
      return { kind: "tool_input_requested", question: "Proceed?", choices: ["yes", "no"] };
    },
  });
  const refund = functionTool({ name: "refund", description: "Refund.", parameters: { type: "object", properties: {} }, effect: "non_idempotent_write", execute: () => "refunded" });
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
    return { toolCalls: [{ name: "slow_asker", id: "s1" }, { name: "refund", id: "r1" }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "sibling", instructions: "Go.", model, tools: [slowAsker, refund] }, "StepwiseSiblingApproval");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("p1", { initialMessage: "Refund and ask." });
  await pollUntil(async () => (started === 1 ? true : undefined), { description: "slow_asker to start" });
  assert.equal(await sessions.resolveInterrupt("p1", { interruptId: "r1-approval", approved: true }), true);
  toolGate.resolve();
  const [question] = await sessions.waitForPendingInterrupts("p1");
  const pending = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(pending.pendingInterrupts.map((interrupt) => interrupt.interruptId), ["s1-input-1"], "only the new question is pending");
  assert.equal(question?.interruptId, "s1-input-1");
  assert.equal(await sessions.answerQuestion("p1", { interruptId: "s1-input-1", answer: "maybe" }), false, "outside the choices");
  assert.equal(await sessions.answerQuestion("p1", { interruptId: "s1-input-1", answer: "yes" }), true);
  await sessions.waitForTurnCount("p1", 1);
  assert.equal((await sessions.getAgentSnapshot("p1")).messages.at(-1)?.text, "got yes | refunded");
});

void test("a tool's question whose interrupt ID is another call's ID fails that call with the clash text, and no question is raised", async (t) => {
  const asker = functionTool({
    name: "asker", description: "Asks.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: (): DeferredToolOutcome => ({ kind: "tool_input_requested", question: "Really?" }),
  });
  const echo = functionTool({ name: "echo", description: "Echo.", parameters: { type: "object", properties: {} }, effect: "read", execute: () => "echo" });
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
    return { toolCalls: [{ name: "asker", id: "x" }, { name: "echo", id: "x-input-1" }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "clash", instructions: "Go.", model, tools: [asker, echo] }, "StepwiseQuestionClash");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("c1", { initialMessage: "Go." });
  await sessions.waitForTurnCount("c1", 1);
  const clash = "the tool's question cannot use interrupt ID x-input-1, which another tool call of this turn uses";
  assert.equal((await sessions.getAgentSnapshot("c1")).messages.at(-1)?.text, `The tool call failed: ${clash} | echo`);
  const events = await sessions.readEvents("c1");
  assert.deepEqual(payloadsOf(events, "interrupt_raised"), []);
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => [payload.tool_call_id, payload.status]).sort(), [["x", "failed"], ["x-input-1", "succeeded"]]);
});

void test("a tool's question gets the session's deadline when it is raised; once it passes, the call is rejected with `question deadline passed` and the tool never runs again", async (t) => {
  let runs = 0;
  const confirm = functionTool({
    name: "confirm", description: "Confirms.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: (): DeferredToolOutcome => { runs += 1; return { kind: "tool_input_requested", question: "Sure?", choices: ["yes"] }; },
  });
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    return results.length > 0 ? { text: results.map((result) => result.output).join(" | ") } : { toolCalls: [{ name: "confirm", id: "k1" }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "confirm", instructions: "x", model, tools: [confirm], interruptDeadlineMs: 7_200_000 }, "StepwiseToolQuestionDeadline");
  const { environment, sessions } = await startStepwiseTestAgent(t, [flow]);
  const before = Date.now();
  await sessions.start("e1", { initialMessage: "Go." });
  const [question] = await sessions.waitForPendingInterrupts("e1");
  const deadline = Date.parse(question?.deadline ?? "");
  assert.ok(deadline >= before + 7_200_000 && deadline <= Date.now() + 7_200_000, `deadline ${question?.deadline} is two hours after the raise`);
  await pollUntil(async () => ((await environment.client.skipTimer("e1", "deadline")) === 1 ? true : undefined), { description: "the question's deadline Timer" });
  await sessions.waitForTurnCount("e1", 1);
  assert.equal((await sessions.getAgentSnapshot("e1")).messages.at(-1)?.text, "question deadline passed");
  assert.equal(runs, 1);
  assert.deepEqual(payloadsOf(await sessions.readEvents("e1"), "tool_call_finished").map((payload) => payload.status), ["rejected"]);
});
