/**
 * SIGKILL tests of questions, durable waits and plans: real Worker child
 * processes on a private SQLite engine, killed while the session waits in
 * `AwaitQuestionAnswer` or `AwaitTimer`, while a tool that asked runs again,
 * and during a plan's executing turn; then replaced by a new process. What
 * ran is counted in an InvocationLog outside the database; what committed is
 * read through a Client in this process, which runs no Worker.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory, type StepHistoryRecord } from "../testing/read-step-history.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import {
  builtInsCrashDirectoryEnvironmentVariable,
  builtInsCrashFlows,
  builtInsCrashGateNames,
  builtInsCrashLog,
  crashAskUserFlow,
  crashDurableWaitFlow,
  crashPlanFlow,
  crashToolQuestionFlow,
  type BuiltInsModelCall,
} from "./test-fixtures/stepwise-built-ins-crash-flows.ts";
import { payloadsOf } from "./test-fixtures/stepwise-test-agent.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/stepwise-built-ins-worker-main.ts", import.meta.url));

async function startHarness(t: TestContext) {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: builtInsCrashFlows, isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  return {
    engine,
    client: environment.client,
    log: builtInsCrashLog(engine.directory),
    gate: (name: string) => new FileGate(engine.directory, name),
    sessions: (flow: AgentSessionFlow) => new AgentSessionTestClient(environment.client, flow),
    startWorkerProcess: async () => {
      const workerProcess = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [builtInsCrashDirectoryEnvironmentVariable]: engine.directory } });
      workerProcesses.push(workerProcess);
      return workerProcess;
    },
  };
}

function executes(history: readonly StepHistoryRecord[], stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

/** Waits until the Flow has a waiting execution of `stepType`. */
function waitForWaitingStep(client: AgentTestEnvironment["client"], flowId: string, stepType: string): Promise<true> {
  return pollUntil(async () => ((await client.describe(flowId)).executions.some((execution) => execution.stepType === stepType && execution.status === "waiting") ? true : undefined),
    { timeoutMs: 20_000, description: `${stepType} of ${flowId} to wait` });
}

void test("SIGKILL while AwaitQuestionAnswer waits: a new Worker keeps waiting on the same question, takes the answer, and no question event repeats", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const sessions = harness.sessions(crashAskUserFlow);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("q1", { initialMessage: "Book a meeting." });
  await sessions.waitForPendingInterrupts("q1", 1, { timeoutMs: 20_000 });
  await waitForWaitingStep(harness.client, "q1", "AwaitQuestionAnswer");
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  // Long enough for the survivor to find the lost Worker's work (liveness lapses after 1.5 s).
  await delay(2500);
  const stillWaiting = await sessions.getAgentSnapshot("q1");
  assert.deepEqual(stillWaiting.pendingInterrupts.map((interrupt) => interrupt.interruptId), ["ask-1"], "the question is still pending");
  assert.deepEqual(stillWaiting.toolCalls.map((call) => call.status), ["awaiting_answer"]);
  await waitForWaitingStep(harness.client, "q1", "AwaitQuestionAnswer");

  assert.equal(await sessions.answerQuestion("q1", { interruptId: "ask-1", answer: "Tue" }), true);
  await sessions.waitForTurnCount("q1", 1, { timeoutMs: 20_000 });
  const snapshot = await sessions.getAgentSnapshot("q1");
  assert.equal(snapshot.messages.at(-1)?.text, 'Results: {"status":"answered","answer":"Tue"}');
  const events = await sessions.readEvents("q1");
  assert.equal(payloadsOf(events, "interrupt_raised").length, 1, "no duplicate question event");
  assert.equal(payloadsOf(events, "interrupt_resolved").length, 1);
  const calls = harness.log.entries().filter((entry) => entry.name === "model_call");
  assert.deepEqual(calls.map((call) => call.processId), [doomed.pid, survivor.pid]);
  assert.deepEqual(executes(await readStepHistory(harness.engine.address, "q1"), "AwaitQuestionAnswer"), [["completed", 1]]);
});

void test("SIGKILL while AwaitTimer waits: a new Worker keeps waiting on the same Timer, SkipTimer ends it once", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const sessions = harness.sessions(crashDurableWaitFlow);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("w1", { initialMessage: "Remind me tomorrow." });
  await waitForWaitingStep(harness.client, "w1", "AwaitTimer");
  const [before] = (await sessions.getAgentSnapshot("w1")).toolCalls;
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  await delay(2500);
  const [after] = (await sessions.getAgentSnapshot("w1")).toolCalls;
  assert.deepEqual([after?.status, after?.waitUntil], ["waiting_for_timer", before?.waitUntil], "the same wait, with the same due time");

  assert.equal(await sessions.skipTimer("w1", "wait-1"), 1);
  await sessions.waitForTurnCount("w1", 1, { timeoutMs: 20_000 });
  assert.equal((await sessions.getAgentSnapshot("w1")).messages.at(-1)?.text, 'Results: {"status":"completed","waited_seconds":86400,"reason":"until tomorrow"}');
  const events = await sessions.readEvents("w1");
  assert.equal(payloadsOf(events, "timer_started").length, 1);
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["succeeded"]);
  assert.deepEqual(harness.log.entries().filter((entry) => entry.name === "model_call").map((call) => call.processId), [doomed.pid, survivor.pid]);
  assert.deepEqual(executes(await readStepHistory(harness.engine.address, "w1"), "AwaitTimer"), [["completed", 1]]);
});

void test("a tool that asked runs again with the answer, and records outcome_unknown once when that second run is killed", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const sessions = harness.sessions(crashToolQuestionFlow);
  const gate = harness.gate(builtInsCrashGateNames.toolSecondRun);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("b1", { initialMessage: "Book a room." });
  const [question] = await sessions.waitForPendingInterrupts("b1", 1, { timeoutMs: 20_000 });
  assert.deepEqual([question?.interruptId, question?.question, question?.choices], ["book-1-input-1", "Which room?", ["Blue", "Green"]]);
  assert.equal(await sessions.answerQuestion("b1", { interruptId: "book-1-input-1", answer: "Green" }), true);
  await gate.waitUntilReached();
  await doomed.kill();
  // A wrongful rerun would pass the open gate, so the log would show it.
  gate.open();
  await harness.startWorkerProcess();
  await sessions.waitForTurnCount("b1", 1, { timeoutMs: 20_000 });

  assert.deepEqual(harness.log.entries().filter((entry) => entry.name.startsWith("book_room")).map((entry) => [entry.name, entry.processId, entry.details]), [
    ["book_room_asked", doomed.pid, { attempt: 1 }],
    ["book_room_booking", doomed.pid, { attempt: 1, answer: "Green", continuation: "room-question" }],
  ], "asked once, booked once (killed), never again");
  const snapshot = await sessions.getAgentSnapshot("b1");
  assert.equal(snapshot.messages.at(-1)?.text, `Results: ${outcomeUnknownToolResult}`);
  const events = await sessions.readEvents("b1");
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["outcome_unknown"]);
  const history = await readStepHistory(harness.engine.address, "b1");
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["completed", 1], ["failed", 1]]);
  assert.deepEqual(executes(history, "RecordToolOutcomeUnknown"), [["completed", 1]]);
});

void test("a Worker killed during an approved plan's executing turn: a new Worker resumes the same execution, started once", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const sessions = harness.sessions(crashPlanFlow);
  const doomed = await harness.startWorkerProcess();
  await sessions.start("p1");
  assert.equal(await sessions.sendUserMessage("p1", "Plan the launch", { planMode: true }), true);
  await sessions.waitForTurnCount("p1", 1, { timeoutMs: 20_000 });
  assert.equal((await sessions.getAgentSnapshot("p1")).plan?.status, "draft");
  assert.equal(await sessions.executePlan("p1", { revision: 1 }), true);
  await harness.gate(builtInsCrashGateNames.executingModelCall).waitUntilReached();
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  const state = await sessions.waitForTurnCount("p1", 2, { timeoutMs: 20_000 });

  assert.deepEqual([state.turnCount, state.interactionMode, state.lastTurnError], [2, "executing", null], "one executing turn, completed");
  const executingCalls = harness.log.entries()
    .filter((entry) => entry.name === "model_call" && (entry.details as BuiltInsModelCall).turnId === "turn-2")
    .map((entry) => [entry.processId, (entry.details as BuiltInsModelCall).attempt]);
  assert.deepEqual(executingCalls, [[doomed.pid, 1], [survivor.pid, 2], [survivor.pid, 1]], "the killed model call reran as attempt 2 of the same RunModel, then the turn's next call ran");
  const snapshot = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(snapshot.plan && [snapshot.plan.revision, snapshot.plan.status], [2, "completed"]);
  const [pendingExecution] = await harness.client.getAttributes("p1", crashPlanFlow.pendingPlanExecution);
  assert.equal(pendingExecution, undefined);
  const events = await sessions.readEvents("p1");
  assert.deepEqual(payloadsOf(events, "plan_execution_started"), [{ revision: 1 }], "the execution started once");
  assert.deepEqual(events.filter((event) => event.type === "turn_started").map((event) => event.turnId), ["turn-1", "turn-2"]);
  const history = await readStepHistory(harness.engine.address, "p1");
  assert.deepEqual(executes(history, "AwaitUserMessage").filter(([status]) => status === "completed").length, 2, "one message, one approval");
  assert.equal(await sessions.executePlan("p1", { revision: 1 }), false, "a replaced revision cannot run again");
});
