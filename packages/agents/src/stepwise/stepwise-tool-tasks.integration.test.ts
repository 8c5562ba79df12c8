/**
 * Tool tasks under Stepwise with the ScriptedModelClient, on a real SQLite
 * engine with a Worker in this process: a function tool that returns
 * `ToolTaskStarted` is polled by `PollToolTask` on a Timer, asks a question
 * that reaches the task as `pendingAnswer`, and records its result; a
 * steer waits for the task; `cancel_turn` mid-poll abandons it, asks
 * `cancelTask`, and drops the poll's late result; a tool without a poller
 * records `missingToolTaskPoller`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import type { ToolTaskPoll, ToolTaskPollOutcome } from "../contract/agent-framework-runner.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import type { QuestionAnswer } from "../contract/values/agent-tool-call.ts";
import { failedToolResult, missingToolTaskPoller, outcomeUnknownToolResult, turnCancelledNoteHeader } from "../contract/values/result-texts.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import { ScriptedModelClient } from "./scripted-model-client.ts";
import { deferred } from "./test-fixtures/deferred.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

const reportModel = () => new ScriptedModelClient((request) => {
  const results = ScriptedModelClient.toolResults(request);
  if (request.turnId !== "turn-1" || results.length > 0) return { text: `Report: ${results.map((result) => result.output).join(" | ")}` };
  return { text: "Starting the report.", toolCalls: [{ name: "build_report", id: "report" }] };
});

void test("a tool task is polled on a Timer, asks a question that reaches the task as pendingAnswer once, and records its result", async (t) => {
  const polls: { continuation: string | null; pendingAnswer: QuestionAnswer | null; interval: number | undefined }[] = [];
  const checkpoints: (string | undefined)[] = [];
  const tool = functionTool({
    name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async (_arguments, context) => {
      checkpoints.push(context.heartbeatCheckpoint);
      return { kind: "tool_task_started", taskId: "job-1", pollIntervalSeconds: 0.2 };
    },
    pollTask: async (poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> => {
      polls.push({ continuation: poll.toolCall.inputContinuation ?? null, pendingAnswer: poll.pendingAnswer, interval: poll.toolCall.taskPollIntervalSeconds });
      if (polls.length === 1) return { kind: "tool_task_pending", pollIntervalSeconds: 1 };
      if (polls.length === 2) return { kind: "tool_input_requested", question: "Which quarter?", choices: ["Q1", "Q2"], continuation: "question-1" };
      if (polls.length === 3) return { kind: "tool_task_pending", pollIntervalSeconds: 2.5, continuation: null };
      return { output: `report for ${poll.toolCall.inputAnswers?.at(-1)?.answer ?? "?"}` };
    },
  });
  const flow = createStepwiseAgentSessionFlow({ name: "reports", instructions: "Report.", model: reportModel(), tools: [tool] }, "StepwiseToolTask");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("t1", { initialMessage: "Build the sales report." });

  const waiting = await pollUntil(async () => {
    const record = (await sessions.getAgentSnapshot("t1")).toolCalls[0];
    return record?.status === "waiting_for_task" ? record : undefined;
  }, { description: "the task to start" });
  assert.deepEqual([waiting.taskId, waiting.taskPollIntervalSeconds], ["job-1", 1], "0.2 s rounds up to 1 s");
  const [interrupt] = await sessions.waitForPendingInterrupts("t1", 1, { timeoutMs: 20_000 });
  assert.deepEqual([interrupt?.interruptId, interrupt?.question, interrupt?.choices], ["report-input-1", "Which quarter?", ["Q1", "Q2"]]);
  assert.equal(await sessions.answerQuestion("t1", { interruptId: "report-input-1", answer: "Q2" }), true);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("t1")).toolCalls[0]?.taskPollIntervalSeconds === 3 ? true : undefined), { description: "the pending interval" });
  // The record's interval is committed a Step before the next poll's Timer (3 s) exists: wait for the Timer itself.
  await pollUntil(async () => ((await sessions.skipToolTaskPoll("t1", "report")) === 1 ? true : undefined), { description: "the next poll's Timer, skipped" });
  await sessions.waitForTurnCount("t1", 1);

  assert.deepEqual(polls, [
    { continuation: null, pendingAnswer: null, interval: 1 },
    { continuation: null, pendingAnswer: null, interval: 1 },
    { continuation: "question-1", pendingAnswer: { interruptId: "report-input-1", resolution: "answered", answer: "Q2" }, interval: 1 },
    { continuation: null, pendingAnswer: null, interval: 3 },
  ]);
  assert.deepEqual(checkpoints, [undefined], "the tool started the job once");
  const snapshot = await sessions.getAgentSnapshot("t1");
  assert.deepEqual(snapshot.messages.map((message) => message.text), ["Build the sales report.", "Starting the report.", "report for Q2", "Report: report for Q2"]);
  const events = await sessions.readEvents("t1");
  assert.deepEqual(payloadsOf(events, "tool_task_started"), [{ tool_call_id: "report", tool_name: "build_report", task_id: "job-1" }]);
  assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "t1")), [
    "StartAgentSession", "RunModel", "CallTool", "PollToolTask", "PollToolTask", "AwaitQuestionAnswer", "AwaitQuestionAnswer", "PollToolTask", "PollToolTask", "ResumeTurn", "RunModel",
  ]);
});

void test("a declined task question goes back to the task as declined, and steering waits for the task's result", async (t) => {
  const answers: (QuestionAnswer | null)[] = [];
  const tool = functionTool({
    name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async () => ({ kind: "tool_task_started", taskId: "job-2", pollIntervalSeconds: 1 }),
    pollTask: async (poll) => {
      answers.push(poll.pendingAnswer);
      if (poll.pendingAnswer === null && answers.length === 1) return { kind: "tool_input_requested", question: "Include drafts?", continuation: "drafts" };
      return { output: `built (${poll.pendingAnswer?.resolution ?? "no answer"})` };
    },
  });
  const flow = createStepwiseAgentSessionFlow({ name: "reports", instructions: "Report.", model: reportModel(), tools: [tool] }, "StepwiseToolTaskSteer");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("t2", { initialMessage: "Build it." });
  await sessions.waitForPendingInterrupts("t2", 1, { timeoutMs: 20_000 });
  assert.equal(await sessions.steerUserMessage("t2", { messageId: null, text: "Make it short." }), true);
  // Steering never cancels a task's question.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await sessions.getAgentSnapshot("t2")).pendingInterrupts[0]?.interruptId, "report-input-1");
  assert.equal(await sessions.resolveInterrupt("t2", { interruptId: "report-input-1", approved: false }), true);
  await sessions.waitForTurnCount("t2", 2);
  assert.deepEqual(answers, [null, { interruptId: "report-input-1", resolution: "declined", answer: null }]);
  const snapshot = await sessions.getAgentSnapshot("t2");
  assert.deepEqual(snapshot.messages.filter((message) => message.turnId === "turn-1").map((message) => message.text), ["Build it.", "Starting the report.", "built (declined)"]);
  assert.equal(snapshot.messages.find((message) => message.turnId === "turn-2")?.text, "Make it short.");
});

void test("cancel_turn mid-poll abandons the task: outcome_unknown with turn_cancelled, cancelTask asked, and the poll's late result dropped", async (t) => {
  const pollStarted = deferred();
  const releasePoll = deferred();
  const cancelled: string[] = [];
  let pollReturned = false;
  const tool = functionTool({
    name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "idempotent_write",
    execute: async () => ({ kind: "tool_task_started", taskId: "job-3", pollIntervalSeconds: 1 }),
    pollTask: async () => {
      pollStarted.resolve();
      await releasePoll.promise;
      pollReturned = true;
      return { output: "a late result" };
    },
    cancelTask: async (cancellation) => {
      cancelled.push(cancellation.toolCall.taskId ?? "");
    },
  });
  const flow = createStepwiseAgentSessionFlow({
    name: "reports", instructions: "Report.", model: reportModel(), tools: [tool], toolPolicies: { build_report: { effect: "idempotent_write", requiresApproval: false } },
  }, "StepwiseToolTaskCancel");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("t3", { initialMessage: "Build it." });
  await pollStarted.promise;
  assert.equal(await sessions.cancelTurn("t3"), true);
  await sessions.waitForTurnCount("t3", 1);
  assert.deepEqual(cancelled, ["job-3"]);
  releasePoll.resolve();
  await pollUntil(async () => (pollReturned ? true : undefined), { description: "the abandoned poll to return" });
  await new Promise((resolve) => setTimeout(resolve, 200));

  const snapshot = await sessions.getAgentSnapshot("t3");
  assert.deepEqual(snapshot.messages.map((message) => message.text), ["Build it.", "Starting the report.", outcomeUnknownToolResult, turnCancelledNoteHeader]);
  const events = await sessions.readEvents("t3");
  assert.deepEqual(payloadsOf(events, "tool_call_finished"), [{ tool_call_id: "report", tool_name: "build_report", status: "outcome_unknown" }]);
  assert.deepEqual(payloadsOf(events, "turn_cancelled"), [{ message_count: 3 }], "the model output, the result, and the note");
  const history = completedExecutes(await readStepHistory(engine.address, "t3"));
  assert.deepEqual(history, ["StartAgentSession", "RunModel", "CallTool", "FinishTurnCancellation", "CancelToolTask", "ResumeTurn", "ApplyTurnControl"]);
  assert.equal(await sessions.sendUserMessage("t3", "Try again later."), true);
  await sessions.waitForTurnCount("t3", 2);
});

void test("a tool task from a tool without a poller fails a read with missingToolTaskPoller", async (t) => {
  const tool = functionTool({
    name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "read",
    execute: async () => ({ kind: "tool_task_started", taskId: "job-4", pollIntervalSeconds: 1 }),
  });
  const flow = createStepwiseAgentSessionFlow({ name: "reports", instructions: "Report.", model: reportModel(), tools: [tool] }, "StepwiseToolTaskNoPoller");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("t4", { initialMessage: "Build it." });
  await sessions.waitForTurnCount("t4", 1);
  assert.equal((await sessions.getAgentSnapshot("t4")).messages[2]?.text, failedToolResult(missingToolTaskPoller));
});
