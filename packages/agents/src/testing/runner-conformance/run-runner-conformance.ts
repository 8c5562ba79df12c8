/**
 * The runner conformance tests: the same scripted conversations, asserted on
 * committed state, for Stepwise and for every framework adapter. A subject
 * builds its session Flow from the neutral model and tools of
 * `conformance-script.ts`; these tests drive it through a real engine (a
 * SQLite file), and the SIGKILL tests through Worker child processes.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { outcomeUnknownAfterToolErrorResult, outcomeUnknownToolResult, rejectedToolResult } from "../../contract/values/result-texts.ts";
import { AgentSessionTestClient } from "../agent-session-test-client.ts";
import { AgentTestEnvironment } from "../agent-test-environment.ts";
import { FileGate } from "../file-gate.ts";
import { KillableWorkerProcess } from "../killable-worker-process.ts";
import { PrivateEngine } from "../private-engine.ts";
import { readStepHistory, type StepHistoryRecord } from "../read-step-history.ts";
import { agentWorkerReadyLine } from "../worker-process-protocol.ts";
import {
  conformanceGateNames,
  conformanceLog,
  conformanceModelFailure,
  conformanceQuestion,
  conformanceToolFailure,
  conformanceUserTexts as texts,
  runnerConformanceSetup,
  type ConformanceToolRun,
  type RunnerConformanceSetup,
} from "./conformance-script.ts";
import { runnerConformanceDirectoryEnvironmentVariable } from "./run-runner-conformance-worker.ts";

/**
 * How long a test waits for a session to get somewhere: long, because a
 * framework such as the Claude Code harness starts a process per model
 * call, and a loaded machine must not fail a correct runner.
 */
const waitMs = 120_000;

/** What an adapter (or Stepwise) gives the conformance tests. */
export interface RunnerConformanceSubject {
  /** Names the tests, such as `"Stepwise"` or `"AI SDK adapter"`. */
  name: string;
  /**
   * Builds the session Flow of `setup.flowType` with `setup.builtInTools`
   * enabled: the framework's own scripted model calling `setup.model.reply`
   * with the latest user text and the turn's tool results, and each
   * `setup.tools` entry wrapped as the framework's schema-only tool that
   * passes the call's idempotency key to `execute`. Called once per test and
   * once per Worker child.
   */
  createFlow(setup: RunnerConformanceSetup): AgentSessionFlow;
  /** A module that calls `runRunnerConformanceWorker(subject)`: the Worker child of the SIGKILL tests. */
  workerEntryModulePath: string;
  /**
   * The framework option `createFlow` sets when `setup.inlineWriteOption` is
   * true, as the framework spells it (`allowedTools`, `needsApproval: false`):
   * one that would run `refund_order` without its approval or outside its
   * tool Step. A flow that refuses it must name it in the error.
   */
  inlineWriteOption: string;
}

interface ConformanceRun {
  engine: PrivateEngine;
  sessions: AgentSessionTestClient;
  directory: string;
  runsOf(toolName: string): ConformanceToolRun[];
  modelCallsFor(userText: string): number;
  /** The statuses of the session's `tool_call_finished` events, oldest first. */
  finishedToolStatuses(sessionId: string): Promise<unknown[]>;
}

async function startRun(t: TestContext, subject: RunnerConformanceSubject, options: { isWorkerInProcess: boolean; flow?: (directory: string) => AgentSessionFlow }): Promise<ConformanceRun> {
  const engine = await PrivateEngine.start();
  const directory = engine.directory;
  let flow: AgentSessionFlow;
  try {
    flow = options.flow === undefined ? subject.createFlow(runnerConformanceSetup(directory)) : options.flow(directory);
  } catch (error) {
    await engine.stop();
    throw error;
  }
  const environment = await AgentTestEnvironment.start({
    engineAddress: engine.address,
    flows: [flow],
    isWorkerInProcess: options.isWorkerInProcess,
    workerOptions: { pollIntervalMs: 20 },
  });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const log = conformanceLog(directory);
  return {
    engine,
    directory,
    sessions: new AgentSessionTestClient(environment.client, flow),
    runsOf: (toolName) => log.entries().filter((entry) => entry.name === toolName).map((entry) => entry.details as ConformanceToolRun),
    modelCallsFor: (userText) => log.entries().filter((entry) => entry.name === "model_call" && (entry.details as { lastUserText: string }).lastUserText === userText).length,
    finishedToolStatuses: async (sessionId) => (await environment.client.readStream(sessionId, flow.agentEvents, { limit: 1000 })).messages
      .map((message) => message.value)
      .filter((event) => event.type === "tool_call_finished")
      .map((event) => event.payload.status),
  };
}

async function startWorker(t: TestContext, subject: RunnerConformanceSubject, run: ConformanceRun): Promise<KillableWorkerProcess> {
  const worker = await KillableWorkerProcess.start({
    entryModulePath: subject.workerEntryModulePath,
    engineAddress: run.engine.address,
    environment: { [runnerConformanceDirectoryEnvironmentVariable]: run.directory },
  });
  t.after(async () => {
    await worker.kill();
    const output = worker.output().split("\n").filter((line) => line !== "" && !line.startsWith(agentWorkerReadyLine));
    if (output.length > 0) t.diagnostic(`Worker process ${worker.pid} printed:\n${output.join("\n")}`);
  });
  return worker;
}

function completedExecutes(history: readonly StepHistoryRecord[], stepType: string): number {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed").length;
}

/** The stored tool result of `toolName`; the contract has every runner store it with its call's ID. */
function toolMessageOf(snapshot: AgentSnapshot, toolName: string): { text: string; toolCallId: string } {
  const message = snapshot.messages.find((candidate) => candidate.role === "tool" && candidate.toolName === toolName);
  assert.ok(message?.toolCallId !== undefined, `a stored tool message of ${toolName} with its tool call ID, in ${JSON.stringify(snapshot.messages.map((stored) => [stored.role, stored.toolName, stored.text]))}`);
  return { text: message.text, toolCallId: message.toolCallId };
}

function lastAssistantText(snapshot: AgentSnapshot): string | undefined {
  return snapshot.messages.filter((message) => message.role === "assistant").at(-1)?.text;
}

/** Checks a finished turn: no error, the user message first, the answer last. */
function assertTurnAnswered(snapshot: AgentSnapshot, userText: string, answer: string): void {
  assert.equal(snapshot.state?.lastTurnError, null);
  assert.equal(snapshot.state?.status, "waiting_for_user_message");
  assert.equal(snapshot.messages[0]?.role, "user");
  assert.equal(snapshot.messages[0]?.text, userText);
  assert.equal(lastAssistantText(snapshot), answer);
}

/** Waits for the approval of the turn's one call, checks its record, approves it, and waits for the answer. */
async function approveOnlyCall(run: ConformanceRun, sessionId: string, expected: { toolName: string; effect: string }): Promise<AgentSnapshot> {
  const [interrupt] = await run.sessions.waitForPendingInterrupts(sessionId, 1, { timeoutMs: waitMs });
  assert.equal(interrupt?.kind, "approval");
  const waiting = await run.sessions.getAgentSnapshot(sessionId);
  assert.deepEqual(waiting.toolCalls.map((call) => [call.toolName, call.effect, call.requiresApproval, call.status]), [[expected.toolName, expected.effect, true, "awaiting_approval"]]);
  assert.equal(run.runsOf(expected.toolName).length, 0, "nothing runs before the approval");
  assert.equal(await run.sessions.resolveInterrupt(sessionId, { interruptId: interrupt.interruptId, approved: true }), true);
  await run.sessions.waitForTurnCount(sessionId, 1, { timeoutMs: waitMs });
  return run.sessions.getAgentSnapshot(sessionId);
}

/**
 * Registers the conformance tests of `subject` with `node:test`.
 *
 * @example
 * // my-adapter-conformance.integration.test.ts
 * runRunnerConformanceTests({
 *   name: "My adapter",
 *   createFlow: (setup) => createMyAdapterSessionFlow(myAgentFor(setup), setup.flowType, { builtInTools: [...setup.builtInTools] }),
 *   workerEntryModulePath: fileURLToPath(new URL("./my-adapter-conformance-worker.ts", import.meta.url)),
 * });
 */
export function runRunnerConformanceTests(subject: RunnerConformanceSubject): void {
  void test(`${subject.name} conformance: a read tool runs once in CallTool under the call's idempotency key, and the model answers from its result`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("read-1", { initialMessage: texts.readTool });
    await run.sessions.waitForTurnCount("read-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("read-1");
    const result = toolMessageOf(snapshot, "lookup_order");
    assert.equal(result.text, "order 7 shipped");
    assertTurnAnswered(snapshot, texts.readTool, "Order 7: order 7 shipped");
    assert.deepEqual(run.runsOf("lookup_order"), [{ idempotencyKey: `read-1/turn-1/${result.toolCallId}`, arguments: { order_id: "7" } }]);
    const history = await readStepHistory(run.engine.address, "read-1");
    assert.equal(completedExecutes(history, "CallTool"), 1);
    assert.equal(completedExecutes(history, "RunModel"), 2, "one RunModel per model call");
    assert.equal(run.modelCallsFor(texts.readTool), 2);
  });

  void test(`${subject.name} conformance: an approved non_idempotent_write waits for approval, then runs once in CallSingleAttemptTool`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("write-1", { initialMessage: texts.approvedWrite });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("write-1", 1, { timeoutMs: waitMs });
    assert.equal(interrupt?.kind, "approval");
    const waiting = await run.sessions.getAgentSnapshot("write-1");
    assert.deepEqual(waiting.toolCalls.map((call) => [call.toolName, call.effect, call.requiresApproval, call.status]), [["refund_order", "non_idempotent_write", true, "awaiting_approval"]]);
    assert.equal(run.runsOf("refund_order").length, 0, "nothing runs before the approval");
    assert.equal(await run.sessions.resolveInterrupt("write-1", { interruptId: interrupt.interruptId, approved: true }), true);
    await run.sessions.waitForTurnCount("write-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("write-1");
    const result = toolMessageOf(snapshot, "refund_order");
    assertTurnAnswered(snapshot, texts.approvedWrite, "Refund: refunded order 8");
    assert.deepEqual(run.runsOf("refund_order"), [{ idempotencyKey: `write-1/turn-1/${result.toolCallId}`, arguments: { order_id: "8" } }]);
    const history = await readStepHistory(run.engine.address, "write-1");
    assert.equal(completedExecutes(history, "CallSingleAttemptTool"), 1);
    assert.equal(completedExecutes(history, "CallTool"), 0);
  });

  void test(`${subject.name} conformance: a rejected approval never runs the tool, and the model sees the rejection`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("reject-1", { initialMessage: texts.rejectedWrite });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("reject-1", 1, { timeoutMs: waitMs });
    assert.ok(interrupt !== undefined);
    assert.equal(await run.sessions.resolveInterrupt("reject-1", { interruptId: interrupt.interruptId, approved: false, rejectionMessage: "Not this order." }), true);
    await run.sessions.waitForTurnCount("reject-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("reject-1");
    const rejection = rejectedToolResult("Not this order.");
    assert.equal(toolMessageOf(snapshot, "refund_order").text, rejection);
    assertTurnAnswered(snapshot, texts.rejectedWrite, `Refund: ${rejection}`);
    assert.equal(run.runsOf("refund_order").length, 0);
  });

  void test(`${subject.name} conformance: ask_user raises a question, and the model continues with the answer`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("ask-1", { initialMessage: texts.askUser });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("ask-1", 1, { timeoutMs: waitMs });
    assert.equal(interrupt?.kind, "question");
    assert.equal(interrupt.question, conformanceQuestion.question);
    assert.deepEqual(interrupt.choices, [...conformanceQuestion.choices]);
    assert.equal(await run.sessions.answerQuestion("ask-1", { interruptId: interrupt.interruptId, answer: "M" }), true);
    await run.sessions.waitForTurnCount("ask-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("ask-1");
    const result = toolMessageOf(snapshot, "ask_user");
    assert.deepEqual(JSON.parse(result.text), { status: "answered", answer: "M" });
    assertTurnAnswered(snapshot, texts.askUser, `You chose: ${result.text}`);
  });

  void test(`${subject.name} conformance: a model call that keeps failing fails the turn after 3 attempts, and the next turn runs`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("fail-1", { initialMessage: texts.failingModel });
    const failed = await run.sessions.waitForTurnCount("fail-1", 1, { timeoutMs: waitMs });
    assert.match(failed.lastTurnError ?? "", new RegExp(conformanceModelFailure));
    assert.equal(run.modelCallsFor(texts.failingModel), 3, "RunModel's 3 attempts");
    assert.equal(await run.sessions.sendUserMessage("fail-1", texts.afterFailure), true);
    const recovered = await run.sessions.waitForTurnCount("fail-1", 2, { timeoutMs: waitMs });
    assert.equal(recovered.lastTurnError, null);
    const snapshot = await run.sessions.getAgentSnapshot("fail-1");
    assert.equal(lastAssistantText(snapshot), `You said: ${texts.afterFailure}`);
  });

  void test(`${subject.name} conformance: a Worker SIGKILLed during RunModel loses only that model call; another Worker reruns it`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: false });
    const first = await startWorker(t, subject, run);
    await run.sessions.startSession("kill-model-1", { initialMessage: texts.parkedModelCall });
    const gate = new FileGate(run.directory, conformanceGateNames.modelCall);
    await gate.waitUntilReached();
    await first.kill();
    gate.open();
    await startWorker(t, subject, run);
    await run.sessions.waitForTurnCount("kill-model-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("kill-model-1");
    assertTurnAnswered(snapshot, texts.parkedModelCall, "Order 9 is on its way.");
    assert.equal(snapshot.messages.filter((message) => message.role === "assistant").length, 1, "one stored answer");
    assert.equal(run.modelCallsFor(texts.parkedModelCall), 2, "the killed model call, then its rerun");
    const history = await readStepHistory(run.engine.address, "kill-model-1");
    assert.equal(completedExecutes(history, "RunModel"), 1);
  });

  void test(`${subject.name} conformance: a Worker SIGKILLed during a single-attempt write records outcome_unknown and never reruns it`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: false });
    const first = await startWorker(t, subject, run);
    await run.sessions.startSession("kill-write-1", { initialMessage: texts.parkedWrite });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("kill-write-1", 1, { timeoutMs: waitMs });
    assert.ok(interrupt !== undefined);
    assert.equal(await run.sessions.resolveInterrupt("kill-write-1", { interruptId: interrupt.interruptId, approved: true }), true);
    const gate = new FileGate(run.directory, conformanceGateNames.singleAttemptTool);
    await gate.waitUntilReached();
    await first.kill();
    // Open the gate, so a wrong rerun would finish and show up in the log instead of hanging.
    gate.open();
    await startWorker(t, subject, run);
    await run.sessions.waitForTurnCount("kill-write-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("kill-write-1");
    assert.equal(toolMessageOf(snapshot, "refund_order_slowly").text, outcomeUnknownToolResult);
    assertTurnAnswered(snapshot, texts.parkedWrite, `Refund: ${outcomeUnknownToolResult}`);
    assert.equal(run.runsOf("refund_order_slowly").length, 1, "a single-attempt write never runs twice");
  });

  void test(`${subject.name} conformance: a framework option that would run a write inline (${subject.inlineWriteOption}) is refused by name, or the write still waits for approval and runs once in its own Step`, async (t) => {
    let refusal: unknown;
    const inline = (directory: string): AgentSessionFlow => {
      try {
        return subject.createFlow({ ...runnerConformanceSetup(directory), inlineWriteOption: true });
      } catch (error) {
        refusal = error;
        throw error;
      }
    };
    let run: ConformanceRun;
    try {
      run = await startRun(t, subject, { isWorkerInProcess: true, flow: inline });
    } catch (error) {
      assert.equal(error, refusal, "building the flow, not starting the engine, failed");
      assert.ok(error instanceof Error && error.message.includes(subject.inlineWriteOption), `the refusal names ${subject.inlineWriteOption}: ${String(error)}`);
      return;
    }
    await run.sessions.startSession("inline-1", { initialMessage: texts.approvedWrite });
    const snapshot = await approveOnlyCall(run, "inline-1", { toolName: "refund_order", effect: "non_idempotent_write" });
    assertTurnAnswered(snapshot, texts.approvedWrite, "Refund: refunded order 8");
    assert.equal(run.runsOf("refund_order").length, 1);
    const history = await readStepHistory(run.engine.address, "inline-1");
    assert.equal(completedExecutes(history, "CallSingleAttemptTool"), 1, "the write ran in its own Step");
    assert.equal(run.modelCallsFor(texts.approvedWrite), 2, "nothing ran inside the model call");
  });

  void test(`${subject.name} conformance: a per-call approval function asks for the call it returns true for, and not for the one it returns false for`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("per-call-1", { initialMessage: texts.perCallApprovalAsks });
    const asked = await approveOnlyCall(run, "per-call-1", { toolName: "cancel_order", effect: "idempotent_write" });
    assertTurnAnswered(asked, texts.perCallApprovalAsks, "Cancel: cancelled order 1001");

    await run.sessions.startSession("per-call-2", { initialMessage: texts.perCallApprovalSkips });
    await run.sessions.waitForTurnCount("per-call-2", 1, { timeoutMs: waitMs });
    const skipped = await run.sessions.getAgentSnapshot("per-call-2");
    assertTurnAnswered(skipped, texts.perCallApprovalSkips, "Cancel: cancelled order 1002");
    const history = await readStepHistory(run.engine.address, "per-call-2");
    assert.equal(history.some((entry) => entry.stepType === "AwaitToolApproval"), false, "no approval for order 1002");
    assert.deepEqual(run.runsOf("cancel_order").map((entry) => entry.arguments.order_id), ["1001", "1002"]);
  });

  void test(`${subject.name} conformance: a session policy that names only an effect keeps the approval the framework asks for`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("kept-1", { initialMessage: texts.frameworkApprovalKept });
    const snapshot = await approveOnlyCall(run, "kept-1", { toolName: "reset_password", effect: "idempotent_write" });
    assertTurnAnswered(snapshot, texts.frameworkApprovalKept, "Reset: reset the password of order 15");
    assert.equal(run.runsOf("reset_password").length, 1);
    const history = await readStepHistory(run.engine.address, "kept-1");
    assert.equal(completedExecutes(history, "CallTool"), 1, "an idempotent write runs in CallTool once approved");
  });

  void test(`${subject.name} conformance: an approved write that throws records outcome_unknown with its error, which reaches the next model request without claiming an interruption`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("throw-1", { initialMessage: texts.throwingWrite });
    const snapshot = await approveOnlyCall(run, "throw-1", { toolName: "charge_order", effect: "non_idempotent_write" });
    const result = toolMessageOf(snapshot, "charge_order");
    assert.equal(result.text, outcomeUnknownAfterToolErrorResult(conformanceToolFailure));
    assert.doesNotMatch(result.text, /interrupted/);
    assertTurnAnswered(snapshot, texts.throwingWrite, `Charge: ${result.text}`);
    assert.deepEqual(await run.finishedToolStatuses("throw-1"), ["outcome_unknown"], "the write may have taken effect before it threw");
    assert.equal(run.runsOf("charge_order").length, 1, "a single-attempt write that throws is not retried");
  });

  void test(`${subject.name} conformance: a Worker SIGKILLed during an approved write that would throw runs it at most once and records the interruption`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: false });
    const first = await startWorker(t, subject, run);
    await run.sessions.startSession("kill-throw-1", { initialMessage: texts.parkedThrowingWrite });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("kill-throw-1", 1, { timeoutMs: waitMs });
    assert.ok(interrupt !== undefined);
    assert.equal(await run.sessions.resolveInterrupt("kill-throw-1", { interruptId: interrupt.interruptId, approved: true }), true);
    const gate = new FileGate(run.directory, conformanceGateNames.throwingWrite);
    await gate.waitUntilReached();
    await first.kill();
    gate.open();
    await startWorker(t, subject, run);
    await run.sessions.waitForTurnCount("kill-throw-1", 1, { timeoutMs: waitMs });
    const snapshot = await run.sessions.getAgentSnapshot("kill-throw-1");
    assert.equal(toolMessageOf(snapshot, "charge_order").text, outcomeUnknownToolResult, "the Worker died mid-write: an interruption");
    assert.deepEqual(await run.finishedToolStatuses("kill-throw-1"), ["outcome_unknown"]);
    assert.equal(run.runsOf("charge_order").length, 1, "the write ran at most once");
  });
}
