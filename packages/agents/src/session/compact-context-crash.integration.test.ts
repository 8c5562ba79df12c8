/**
 * SIGKILL during `CompactContext`: a real Worker child process on a private
 * SQLite engine is killed while its summary call runs, and a new process
 * takes over. Only the summary call runs again: no model call repeats, the
 * summary is stored once, and the turn completes once. What ran is counted
 * in an InvocationLog outside the database.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";
import { AgentStepType } from "./step-types.ts";
import {
  compactionCrashDirectoryEnvironmentVariable,
  compactionCrashFlow,
  compactionCrashFlows,
  compactionCrashGateName,
  compactionCrashLog,
  compactionCrashUserText,
  type CompactionCrashCall,
} from "./test-fixtures/compaction-crash-flows.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/compaction-crash-worker-main.ts", import.meta.url));

void test("SIGKILL during CompactContext: a new Worker process reruns only the summary call, and the turn completes once", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: compactionCrashFlows, isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  const startWorkerProcess = async (): Promise<KillableWorkerProcess> => {
    const workerProcess = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [compactionCrashDirectoryEnvironmentVariable]: engine.directory } });
    workerProcesses.push(workerProcess);
    return workerProcess;
  };
  const sessions = new AgentSessionTestClient(environment.client, compactionCrashFlow);
  const gate = new FileGate(engine.directory, compactionCrashGateName);
  const log = compactionCrashLog(engine.directory);
  const doomed = await startWorkerProcess();

  // Turns until one parks in its summary call.
  await sessions.startSession("k1", { initialMessage: compactionCrashUserText(1) });
  let turn = 1;
  for (;;) {
    const reached = await pollUntil(async () => {
      if (gate.arrivals().length > 0) return "gate";
      const [state] = await environment.client.getAttributes("k1", compactionCrashFlow.agentState);
      return state !== undefined && state.turnCount >= turn && state.activeTurnId === null ? "turn" : undefined;
    }, { timeoutMs: 20_000, description: `turn ${turn} to end or to reach the summary call` });
    if (reached === "gate") break;
    assert.ok(turn < 12, "the session compacts within 12 turns");
    turn += 1;
    assert.equal(await sessions.sendUserMessage("k1", compactionCrashUserText(turn)), true);
  }
  const compactingTurn = `turn-${turn}`;
  const [compacting] = await environment.client.getAttributes("k1", compactionCrashFlow.agentState);
  assert.deepEqual([compacting?.status, compacting?.activeTurnId], ["compacting_context", compactingTurn]);
  const modelCallsBefore = log.entries().filter((entry) => entry.name === "model_call").length;
  assert.equal(modelCallsBefore, turn - 1, "the compacting turn made no model call before its summary");

  await doomed.kill();
  gate.open();
  const survivor = await startWorkerProcess();
  await sessions.waitForTurnCount("k1", turn, { timeoutMs: 30_000 });

  const calls = (name: string) => log.entries().filter((entry) => entry.name === name).map((entry) => entry.details as CompactionCrashCall);
  const summaryCalls = calls("summary_call");
  assert.deepEqual(summaryCalls.map((call) => [call.turnId, call.attempt, call.processId]), [[compactingTurn, 1, doomed.pid], [compactingTurn, 2, survivor.pid]], "only the summary call ran again");
  const modelCalls = calls("model_call");
  assert.equal(modelCalls.length, turn, "one model call per turn: none repeated");
  assert.deepEqual(modelCalls.filter((call) => call.turnId === compactingTurn).map((call) => [call.attempt, call.processId]), [[1, survivor.pid]]);

  const snapshot = await sessions.getAgentSnapshot("k1");
  assert.equal(snapshot.contextSummary?.generation, 1);
  assert.equal(snapshot.contextSummary?.summary, "The customer is waiting for a parcel and a refund.");
  assert.equal(snapshot.messages.filter((message) => message.turnId === compactingTurn).length, 2, "the turn stored its message and one answer");
  assert.equal(snapshot.usage.requests, turn + 1, "the killed summary call's usage was never recorded");
  const history = await readStepHistory(engine.address, "k1");
  const compactions = history.filter((entry) => entry.stepType === AgentStepType.CompactContext && entry.method === "execute");
  assert.deepEqual(compactions.map((entry) => [entry.status, entry.attempt]), [["failed", 1], ["completed", 2]]);
  const events = await sessions.readEvents("k1");
  assert.equal(events.filter((event) => event.type === "compaction_finished").length, 1);
  assert.ok(events.filter((event) => event.type === "compaction_started").length >= 2, "each CompactContext attempt writes compaction_started");
});
