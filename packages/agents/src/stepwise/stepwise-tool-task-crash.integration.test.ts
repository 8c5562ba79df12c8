/**
 * SIGKILL tests of tool tasks: real Worker child processes on a private
 * SQLite engine, killed after a job started but before its tool Step
 * committed (the task ID is the checkpoint of the started job), and during
 * a poll; then replaced by a new process. One task is polled to its result
 * across the restarts, and one is cancelled while no Worker runs. What ran is
 * counted in an InvocationLog outside the database.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory, type StepHistoryRecord } from "../testing/read-step-history.ts";
import { outcomeUnknownToolResult, turnCancelledNoteHeader } from "../contract/values/result-texts.ts";
import {
  crashToolTaskFlow,
  toolTaskCrashDirectoryEnvironmentVariable,
  toolTaskCrashFlows,
  toolTaskCrashGateNames,
  toolTaskCrashLog,
} from "./test-fixtures/stepwise-tool-task-crash-flows.ts";
import { payloadsOf } from "./test-fixtures/stepwise-test-agent.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/stepwise-tool-task-worker-main.ts", import.meta.url));

async function startHarness(t: TestContext) {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: toolTaskCrashFlows, isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  return {
    engine,
    log: toolTaskCrashLog(engine.directory),
    gate: (name: string) => new FileGate(engine.directory, name),
    sessions: new AgentSessionTestClient(environment.client, crashToolTaskFlow),
    startWorkerProcess: async () => {
      const workerProcess = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [toolTaskCrashDirectoryEnvironmentVariable]: engine.directory } });
      workerProcesses.push(workerProcess);
      return workerProcess;
    },
  };
}

function executes(history: readonly StepHistoryRecord[], stepType: string): string[] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => `${entry.status}#${entry.attempt}`);
}

void test("a tool task survives SIGKILLs after its job started and during a poll: the job starts once and its result is recorded once", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const afterStart = harness.gate(toolTaskCrashGateNames.afterStart);
  const pollGate = harness.gate(toolTaskCrashGateNames.poll);
  const first = await harness.startWorkerProcess();
  await harness.sessions.start("k1", { initialMessage: "Build the report." });
  await afterStart.waitUntilReached({ timeoutMs: 20_000 });
  await first.kill();
  // The next attempt reads the saved job ID as its checkpoint and starts nothing.
  const second = await harness.startWorkerProcess();
  await pollGate.waitUntilReached({ timeoutMs: 20_000 });
  const [waiting] = (await harness.sessions.getAgentSnapshot("k1")).toolCalls;
  assert.deepEqual([waiting?.status, waiting?.taskId], ["waiting_for_task", "job-report"]);
  await second.kill();
  await harness.startWorkerProcess();
  pollGate.open();
  await harness.sessions.waitForTurnCount("k1", 1, { timeoutMs: 30_000 });

  const snapshot = await harness.sessions.getAgentSnapshot("k1");
  assert.deepEqual(snapshot.messages.map((message) => message.text), ["Build the report.", "Starting.", "report job-report is ready", "Results: report job-report is ready"]);
  const entries = harness.log.entries();
  assert.deepEqual(entries.filter((entry) => entry.name === "job_started").map((entry) => entry.details), [{ jobId: "job-report", attempt: 1, idempotencyKey: "k1/turn-1/report" }], "the job started once");
  assert.ok(entries.filter((entry) => entry.name === "poll").length >= 2, "the killed poll ran again");
  const events = await harness.sessions.readEvents("k1");
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["succeeded"]);
  const history = await readStepHistory(harness.engine.address, "k1");
  assert.equal(executes(history, "CallTool").filter((entry) => entry.startsWith("completed")).length, 1);
  assert.equal(executes(history, "PollToolTask").filter((entry) => entry.startsWith("completed")).length, 1);
});

void test("cancel_turn while a killed Worker's poll is in flight: a new Worker abandons the task, asks cancelTask, and records outcome_unknown", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  harness.gate(toolTaskCrashGateNames.afterStart).open();
  const pollGate = harness.gate(toolTaskCrashGateNames.poll);
  const doomed = await harness.startWorkerProcess();
  await harness.sessions.start("k2", { initialMessage: "Build the report." });
  await pollGate.waitUntilReached({ timeoutMs: 20_000 });
  await doomed.kill();
  assert.equal(await harness.sessions.cancelTurn("k2"), true, "recorded while no Worker runs");
  pollGate.open();
  await harness.startWorkerProcess();
  await harness.sessions.waitForTurnCount("k2", 1, { timeoutMs: 30_000 });

  const snapshot = await harness.sessions.getAgentSnapshot("k2");
  assert.deepEqual(snapshot.messages.map((message) => message.text), ["Build the report.", "Starting.", outcomeUnknownToolResult, turnCancelledNoteHeader]);
  const entries = harness.log.entries();
  assert.deepEqual(entries.filter((entry) => entry.name === "job_cancelled").map((entry) => (entry.details as { taskId: string }).taskId), ["job-report"]);
  assert.equal(entries.filter((entry) => entry.name === "poll").length, 1, "the cancelled poll never ran again");
  const events = await harness.sessions.readEvents("k2");
  assert.deepEqual(payloadsOf(events, "tool_call_finished").map((payload) => payload.status), ["outcome_unknown"]);
  assert.equal(payloadsOf(events, "turn_cancelled").length, 1);
  assert.equal(await harness.sessions.sendUserMessage("k2", "Thanks."), true);
  await harness.sessions.waitForTurnCount("k2", 2, { timeoutMs: 30_000 });
});
