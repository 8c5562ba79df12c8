/**
 * Crash tests of the durable agent session: real Worker child processes on a
 * private SQLite engine, SIGKILLed while a model call, a retryable tool, a
 * single-attempt tool or an approval wait is in flight, then replaced by a
 * new process. What really ran is counted in an InvocationLog outside the
 * database; what committed is read back through a Client in this process,
 * which runs no Worker.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import type { InvocationLog, InvocationLogEntry } from "../testing/invocation-log.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory, type StepHistoryRecord } from "../testing/read-step-history.ts";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import type { AgentState } from "../contract/values/agent-state.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import type { AgentSessionFlow } from "./create-agent-session-flow.ts";
import {
  crashApprovalFlow,
  crashCallToolFlow,
  crashDirectoryEnvironmentVariable,
  crashGateNames,
  crashInvocationLog,
  crashRunModelFlow,
  crashSessionFlows,
  crashSingleAttemptToolFlow,
  type ModelCallDetails,
  type ToolRunDetails,
} from "./test-fixtures/crash-session-flows.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/crash-session-worker-main.ts", import.meta.url));

/** Generous: a Worker child starts in well under a second, and a lost Worker is noticed after 1.5 s. */
const recoveryBoundMs = 20_000;

interface Harness {
  engine: PrivateEngine;
  client: Client;
  log: InvocationLog;
  gate(name: string): FileGate;
  startWorkerProcess(): Promise<KillableWorkerProcess>;
}

async function setUp(t: TestContext): Promise<Harness> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: crashSessionFlows, isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  return {
    engine,
    client: environment.client,
    log: crashInvocationLog(engine.directory),
    gate: (name) => new FileGate(engine.directory, name),
    startWorkerProcess: async () => {
      const workerProcess = await KillableWorkerProcess.start({
        entryModulePath,
        engineAddress: engine.address,
        environment: { [crashDirectoryEnvironmentVariable]: engine.directory },
      });
      workerProcesses.push(workerProcess);
      return workerProcess;
    },
  };
}

async function readState(client: Client, flow: AgentSessionFlow, flowId: string): Promise<AgentState | undefined> {
  const [state] = await client.getAttributes(flowId, flow.agentState);
  return state;
}

/** Waits until the session's first turn ended (completed or failed) and the session waits for a message. */
function waitForFirstTurnEnd(client: Client, flow: AgentSessionFlow, flowId: string): Promise<AgentState> {
  return pollUntil(async () => {
    const state = await readState(client, flow, flowId);
    return state !== undefined && state.turnCount >= 1 && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: recoveryBoundMs, intervalMs: 10, description: `${flowId} to end its first turn` });
}

async function readEvents(client: Client, flow: AgentSessionFlow, flowId: string): Promise<AgentEvent[]> {
  return (await client.readStream(flowId, flow.agentEvents, { limit: 1000 })).messages.map((message) => message.value);
}

function eventsOfType(events: readonly AgentEvent[], type: AgentEventType): AgentEvent[] {
  return events.filter((event) => event.type === type);
}

function executes(history: readonly StepHistoryRecord[], stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

function modelCalls(log: InvocationLog, flowId: string): (ModelCallDetails & { processId: number; recordedAt: number })[] {
  return log.entries()
    .filter((entry) => entry.name === "model_call" && (entry.details as ModelCallDetails).flowId === flowId)
    .map((entry) => ({ ...(entry.details as ModelCallDetails), processId: entry.processId, recordedAt: entry.recordedAt }));
}

function toolRuns(log: InvocationLog, toolName: string): (InvocationLogEntry & { details: ToolRunDetails })[] {
  return log.entries().filter((entry): entry is InvocationLogEntry & { details: ToolRunDetails } => entry.name === toolName);
}

/** `resolve_interrupt` may meet the lock of a running Step; the contract says to retry. */
function resolveInterrupt(client: Client, flow: AgentSessionFlow, flowId: string, interruptId: string): Promise<boolean> {
  return client.invokeRPC(flow.resolveInterrupt, flowId, { interruptId, approved: true }, { lockConflictRetryMs: recoveryBoundMs });
}

function waitForPendingInterrupt(client: Client, flow: AgentSessionFlow, flowId: string): Promise<string> {
  return pollUntil(async () => (await client.invokeRPC(flow.getAgentSnapshot, flowId)).pendingInterrupts[0]?.interruptId, {
    timeoutMs: recoveryBoundMs,
    intervalMs: 10,
    description: `${flowId} to raise an approval`,
  });
}

function reportRecovery(t: TestContext, what: string, milliseconds: number): void {
  t.diagnostic(`${what}: ${Math.round(milliseconds)} ms`);
  assert.ok(milliseconds < recoveryBoundMs, `${what} took ${Math.round(milliseconds)} ms, over ${recoveryBoundMs} ms`);
}

void test("SIGKILL during RunModel: a new Worker process reruns the model call and the turn completes exactly once", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const flow = crashRunModelFlow;
  const doomed = await harness.startWorkerProcess();
  await harness.client.start(flow, "s1", { initial_message: "Where is order 7?" });
  // The first model call asked for lookup_order; the second, which reads its result, parks at the gate.
  await harness.gate(crashGateNames.runModel).waitUntilReached();

  const killedAt = Date.now();
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  const state = await waitForFirstTurnEnd(harness.client, flow, "s1");
  const completedAt = Date.now();

  const calls = modelCalls(harness.log, "s1");
  assert.deepEqual(calls.map((call) => [call.modelCall, call.attempt, call.processId]), [
    [1, 1, doomed.pid],
    [2, 1, doomed.pid],
    [2, 2, survivor.pid],
  ], "the killed model call was rerun once, as attempt 2, by the new process");
  assert.deepEqual(calls[2]?.toolResults, calls[1]?.toolResults, "the rerun saw the same committed state");
  assert.equal(toolRuns(harness.log, "lookup_order").length, 1, "the committed tool call was not repeated");
  reportRecovery(t, "RunModel: kill to the model call's rerun", (calls[2]?.recordedAt ?? Infinity) - killedAt);
  reportRecovery(t, "RunModel: kill to turn completed", completedAt - killedAt);

  assert.equal(state.turnCount, 1);
  assert.equal(state.messageCount, 4);
  assert.equal(state.lastTurnError, null);
  const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s1");
  assert.deepEqual(snapshot.messages.map((message) => [message.sequence, message.role, message.text, message.turnId]), [
    [1, "user", "Where is order 7?", "turn-1"],
    [2, "assistant", "Let me look.", "turn-1"],
    [3, "tool", "order 7: shipped", "turn-1"],
    [4, "assistant", "succeeded: order 7: shipped", "turn-1"],
  ], "every message is stored once");
  assert.equal(snapshot.usage.requests, 2, "the killed attempt's usage is not counted");

  const events = await readEvents(harness.client, flow, "s1");
  assert.equal(eventsOfType(events, "turn_started").length, 1);
  assert.equal(eventsOfType(events, "turn_completed").length, 1);
  assert.deepEqual(eventsOfType(events, "turn_completed")[0]?.payload, { message_count: 3 });
  assert.equal(eventsOfType(events, "turn_failed").length, 0);

  const history = await readStepHistory(harness.engine.address, "s1");
  assert.deepEqual(executes(history, "RunModel"), [["completed", 1], ["failed", 1], ["completed", 2]]);
  const [, failed, rerun] = history.filter((entry) => entry.stepType === "RunModel");
  assert.match(failed?.error ?? "", /^WorkerLost: /);
  assert.equal(failed?.executionId, rerun?.executionId, "the rerun is the next attempt of the same execution");
  assert.deepEqual(history.filter((entry) => entry.method === "execute" && entry.status === "completed").map((entry) => entry.stepType), [
    "StartAgentSession", "RunModel", "CallTool", "ResumeTurn", "RunModel",
  ]);
});

void test("SIGKILL during CallTool: a new Worker process retries the tool with the same idempotency key and the turn gets its output", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const flow = crashCallToolFlow;
  const doomed = await harness.startWorkerProcess();
  await harness.client.start(flow, "s2", { initial_message: "Save the Q3 report" });
  await harness.gate(crashGateNames.callTool).waitUntilReached();

  const killedAt = Date.now();
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  const state = await waitForFirstTurnEnd(harness.client, flow, "s2");
  const completedAt = Date.now();

  const expectedKey = "s2/turn-1/turn-1-call-1-0";
  const runs = toolRuns(harness.log, "save_report");
  assert.deepEqual(runs.map((run) => [run.processId, run.details.attempt, run.details.idempotencyKey]), [
    [doomed.pid, 1, expectedKey],
    [survivor.pid, 2, expectedKey],
  ], "both runs saw the idempotency key <flowId>/<turnId>/<toolCallId>");
  reportRecovery(t, "CallTool: kill to the tool's retry", (runs[1]?.recordedAt ?? Infinity) - killedAt);
  reportRecovery(t, "CallTool: kill to turn completed", completedAt - killedAt);

  assert.equal(state.turnCount, 1);
  assert.equal(state.messageCount, 4);
  assert.equal(state.lastTurnError, null);
  const output = `report q3 saved under ${expectedKey}`;
  const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s2");
  assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text]), [
    ["user", "Save the Q3 report"],
    ["assistant", ""],
    ["tool", output],
    ["assistant", `succeeded: ${output}`],
  ]);
  assert.deepEqual(modelCalls(harness.log, "s2").map((call) => call.toolResults.map((result) => [result.status, result.output])), [[], [["succeeded", output]]]);

  const events = await readEvents(harness.client, flow, "s2");
  assert.deepEqual(eventsOfType(events, "tool_call_started").map((event) => event.attempt), [1, 2], "each attempt said it started the tool");
  assert.deepEqual(eventsOfType(events, "tool_call_finished").map((event) => event.payload.status), ["succeeded"]);
  assert.equal(eventsOfType(events, "turn_completed").length, 1);

  const history = await readStepHistory(harness.engine.address, "s2");
  assert.deepEqual(executes(history, "CallTool"), [["failed", 1], ["completed", 2]]);
  assert.match(history.find((entry) => entry.stepType === "CallTool")?.error ?? "", /^WorkerLost: /);
  assert.deepEqual(executes(history, "RecordToolFailure"), []);
});

void test("SIGKILL during CallSingleAttemptTool: the write is never run again, and the model sees outcome_unknown", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const flow = crashSingleAttemptToolFlow;
  const gate = harness.gate(crashGateNames.singleAttemptTool);
  const doomed = await harness.startWorkerProcess();
  await harness.client.start(flow, "s3", { initial_message: "Pay the 12 EUR invoice" });
  const interruptId = await waitForPendingInterrupt(harness.client, flow, "s3");
  assert.equal(await resolveInterrupt(harness.client, flow, "s3", interruptId), true);
  await gate.waitUntilReached();

  const killedAt = Date.now();
  await doomed.kill();
  // A wrongful rerun would pass the gate, so the test would see it run.
  gate.open();
  const survivor = await harness.startWorkerProcess();
  const state = await waitForFirstTurnEnd(harness.client, flow, "s3");
  const completedAt = Date.now();
  reportRecovery(t, "CallSingleAttemptTool: kill to turn completed", completedAt - killedAt);

  assert.deepEqual(toolRuns(harness.log, "send_payment").map((run) => [run.processId, run.details.attempt, run.details.idempotencyKey]), [
    [doomed.pid, 1, "s3/turn-1/turn-1-call-1-0"],
  ], "the write ran once, in the killed process");
  assert.equal(state.turnCount, 1);
  assert.equal(state.lastTurnError, null);

  const seen = modelCalls(harness.log, "s3");
  assert.deepEqual(seen.map((call) => [call.modelCall, call.processId]), [[1, doomed.pid], [2, survivor.pid]]);
  const [result] = seen[1]?.toolResults ?? [];
  assert.equal(result?.status, "outcome_unknown");
  assert.equal(result?.output, outcomeUnknownToolResult, "the model's next call saw the contract's outcome_unknown result");
  assert.match(result?.error ?? "", /^WorkerLost: /);

  const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s3");
  assert.deepEqual(snapshot.messages.map((message) => [message.role, message.text]), [
    ["user", "Pay the 12 EUR invoice"],
    ["assistant", ""],
    ["tool", outcomeUnknownToolResult],
    ["assistant", `outcome_unknown: ${outcomeUnknownToolResult}`],
  ]);
  const events = await readEvents(harness.client, flow, "s3");
  assert.deepEqual(eventsOfType(events, "tool_call_started").map((event) => event.attempt), [1]);
  assert.deepEqual(eventsOfType(events, "tool_call_finished").map((event) => event.payload.status), ["outcome_unknown"]);
  assert.equal(eventsOfType(events, "turn_completed").length, 1);

  const history = await readStepHistory(harness.engine.address, "s3");
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["failed", 1]]);
  assert.match(history.find((entry) => entry.stepType === "CallSingleAttemptTool")?.error ?? "", /^WorkerLost: /);
  assert.deepEqual(executes(history, "RecordToolOutcomeUnknown"), [["completed", 1]]);

  // A late rerun would still show up in the log.
  await delay(500);
  assert.equal(toolRuns(harness.log, "send_payment").length, 1, "the write still ran only once after the turn ended");
});

void test("SIGKILL while AwaitToolApproval waits: a new Worker process takes the approval and the call runs once", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const flow = crashApprovalFlow;
  const doomed = await harness.startWorkerProcess();
  await harness.client.start(flow, "s4", { initial_message: "Delete the 3 stale records" });
  const interruptId = await waitForPendingInterrupt(harness.client, flow, "s4");
  await pollUntil(async () => (await harness.client.describe("s4")).executions.some((execution) => execution.stepType === "AwaitToolApproval" && execution.status === "waiting"), {
    timeoutMs: recoveryBoundMs,
    intervalMs: 10,
    description: "AwaitToolApproval to wait",
  });

  const killedAt = Date.now();
  await doomed.kill();
  const survivor = await harness.startWorkerProcess();
  const startedAt = Date.now();
  assert.equal(await resolveInterrupt(harness.client, flow, "s4", interruptId), true);
  const approvedAt = Date.now();
  const state = await waitForFirstTurnEnd(harness.client, flow, "s4");
  const completedAt = Date.now();

  const runs = toolRuns(harness.log, "delete_records");
  assert.deepEqual(runs.map((run) => [run.processId, run.details.attempt, run.details.idempotencyKey]), [[survivor.pid, 1, "s4/turn-1/turn-1-call-1-0"]]);
  reportRecovery(t, "approval: kill to new Worker process ready", startedAt - killedAt);
  reportRecovery(t, "approval: approved to tool run", (runs[0]?.recordedAt ?? Infinity) - approvedAt);
  reportRecovery(t, "approval: kill to turn completed", completedAt - killedAt);

  assert.equal(state.turnCount, 1);
  assert.equal(state.messageCount, 4);
  assert.equal(state.lastTurnError, null);
  const snapshot = await harness.client.invokeRPC(flow.getAgentSnapshot, "s4");
  assert.equal(snapshot.messages.at(-1)?.text, "succeeded: deleted 3 records");
  assert.deepEqual(snapshot.pendingInterrupts, []);
  const events = await readEvents(harness.client, flow, "s4");
  assert.deepEqual(eventsOfType(events, "interrupt_resolved").map((event) => event.payload.approved), [true]);
  assert.deepEqual(eventsOfType(events, "tool_call_finished").map((event) => event.payload.status), ["succeeded"]);
  assert.equal(eventsOfType(events, "turn_completed").length, 1);

  const history = await readStepHistory(harness.engine.address, "s4");
  assert.deepEqual(executes(history, "AwaitToolApproval"), [["completed", 1]]);
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["completed", 1]]);

  await delay(500);
  assert.equal(toolRuns(harness.log, "delete_records").length, 1, "the write still ran only once after the turn ended");
});
