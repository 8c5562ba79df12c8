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
import { outcomeUnknownToolResult, rejectedToolResult } from "../../contract/values/result-texts.ts";
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
  conformanceUserTexts as texts,
  runnerConformanceSetup,
  type ConformanceToolRun,
  type RunnerConformanceSetup,
} from "./conformance-script.ts";
import { runnerConformanceDirectoryEnvironmentVariable } from "./run-runner-conformance-worker.ts";

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
}

interface ConformanceRun {
  engine: PrivateEngine;
  sessions: AgentSessionTestClient;
  directory: string;
  runsOf(toolName: string): ConformanceToolRun[];
  modelCallsFor(userText: string): number;
}

async function startRun(t: TestContext, subject: RunnerConformanceSubject, options: { isWorkerInProcess: boolean }): Promise<ConformanceRun> {
  const engine = await PrivateEngine.start();
  const directory = engine.directory;
  const flow = subject.createFlow(runnerConformanceSetup(directory));
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
    await run.sessions.waitForTurnCount("read-1", 1);
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
    const [interrupt] = await run.sessions.waitForPendingInterrupts("write-1");
    assert.equal(interrupt?.kind, "approval");
    const waiting = await run.sessions.getAgentSnapshot("write-1");
    assert.deepEqual(waiting.toolCalls.map((call) => [call.toolName, call.effect, call.requiresApproval, call.status]), [["refund_order", "non_idempotent_write", true, "awaiting_approval"]]);
    assert.equal(run.runsOf("refund_order").length, 0, "nothing runs before the approval");
    assert.equal(await run.sessions.resolveInterrupt("write-1", { interruptId: interrupt.interruptId, approved: true }), true);
    await run.sessions.waitForTurnCount("write-1", 1);
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
    const [interrupt] = await run.sessions.waitForPendingInterrupts("reject-1");
    assert.ok(interrupt !== undefined);
    assert.equal(await run.sessions.resolveInterrupt("reject-1", { interruptId: interrupt.interruptId, approved: false, rejectionMessage: "Not this order." }), true);
    await run.sessions.waitForTurnCount("reject-1", 1);
    const snapshot = await run.sessions.getAgentSnapshot("reject-1");
    const rejection = rejectedToolResult("Not this order.");
    assert.equal(toolMessageOf(snapshot, "refund_order").text, rejection);
    assertTurnAnswered(snapshot, texts.rejectedWrite, `Refund: ${rejection}`);
    assert.equal(run.runsOf("refund_order").length, 0);
  });

  void test(`${subject.name} conformance: ask_user raises a question, and the model continues with the answer`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("ask-1", { initialMessage: texts.askUser });
    const [interrupt] = await run.sessions.waitForPendingInterrupts("ask-1");
    assert.equal(interrupt?.kind, "question");
    assert.equal(interrupt.question, conformanceQuestion.question);
    assert.deepEqual(interrupt.choices, [...conformanceQuestion.choices]);
    assert.equal(await run.sessions.answerQuestion("ask-1", { interruptId: interrupt.interruptId, answer: "M" }), true);
    await run.sessions.waitForTurnCount("ask-1", 1);
    const snapshot = await run.sessions.getAgentSnapshot("ask-1");
    const result = toolMessageOf(snapshot, "ask_user");
    assert.deepEqual(JSON.parse(result.text), { status: "answered", answer: "M" });
    assertTurnAnswered(snapshot, texts.askUser, `You chose: ${result.text}`);
  });

  void test(`${subject.name} conformance: a model call that keeps failing fails the turn after 3 attempts, and the next turn runs`, async (t) => {
    const run = await startRun(t, subject, { isWorkerInProcess: true });
    await run.sessions.startSession("fail-1", { initialMessage: texts.failingModel });
    const failed = await run.sessions.waitForTurnCount("fail-1", 1, { timeoutMs: 60_000 });
    assert.match(failed.lastTurnError ?? "", new RegExp(conformanceModelFailure));
    assert.equal(run.modelCallsFor(texts.failingModel), 3, "RunModel's 3 attempts");
    assert.equal(await run.sessions.sendUserMessage("fail-1", texts.afterFailure), true);
    const recovered = await run.sessions.waitForTurnCount("fail-1", 2);
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
    await run.sessions.waitForTurnCount("kill-model-1", 1, { timeoutMs: 30_000 });
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
    const [interrupt] = await run.sessions.waitForPendingInterrupts("kill-write-1", 1, { timeoutMs: 30_000 });
    assert.ok(interrupt !== undefined);
    assert.equal(await run.sessions.resolveInterrupt("kill-write-1", { interruptId: interrupt.interruptId, approved: true }), true);
    const gate = new FileGate(run.directory, conformanceGateNames.singleAttemptTool);
    await gate.waitUntilReached();
    await first.kill();
    // Open the gate, so a wrong rerun would finish and show up in the log instead of hanging.
    gate.open();
    await startWorker(t, subject, run);
    await run.sessions.waitForTurnCount("kill-write-1", 1, { timeoutMs: 30_000 });
    const snapshot = await run.sessions.getAgentSnapshot("kill-write-1");
    assert.equal(toolMessageOf(snapshot, "refund_order_slowly").text, outcomeUnknownToolResult);
    assertTurnAnswered(snapshot, texts.parkedWrite, `Refund: ${outcomeUnknownToolResult}`);
    assert.equal(run.runsOf("refund_order_slowly").length, 1, "a single-attempt write never runs twice");
  });
}
