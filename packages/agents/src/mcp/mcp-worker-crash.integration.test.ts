/**
 * A Worker child process SIGKILLed while an MCP tool call is in flight: the
 * stdio server it started is parked at a FileGate; a new Worker process takes
 * over. A read is sent again, with the same idempotency key, to a new server
 * process; a write records outcome_unknown and is never sent again.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import { crashNotesFlow, notesFolderEnvironmentVariable } from "./test-fixtures/mcp-session-flows.ts";
import { notesServerFolder } from "./test-fixtures/notes-mcp-servers.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/mcp-session-worker-main.ts", import.meta.url));

async function startHarness(t: TestContext) {
  const folder = notesServerFolder(t);
  const flow = crashNotesFlow(folder.directory);
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow], isWorkerInProcess: false });
  const workers: KillableWorkerProcess[] = [];
  t.after(async () => {
    for (const worker of workers) await worker.kill();
    await environment.close();
    await engine.stop();
  });
  return {
    folder,
    engine,
    sessions: new AgentSessionTestClient(environment.client, flow),
    startWorker: async () => {
      const worker = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [notesFolderEnvironmentVariable]: folder.directory } });
      workers.push(worker);
      return worker;
    },
  };
}

function executes(history: Awaited<ReturnType<typeof readStepHistory>>, stepType: string): [string, number][] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => [entry.status, entry.attempt]);
}

void test("a Worker SIGKILLed during an MCP read: a new Worker sends it again with the same key, to a new server process", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const gate = new FileGate(harness.folder.directory, "parked-read");
  const doomed = await harness.startWorker();
  await harness.sessions.start("r1", { initialMessage: "call notes__parked_read" });
  await gate.waitUntilReached({ timeoutMs: 60_000 });
  await doomed.kill();
  gate.open();
  await harness.startWorker();
  await harness.sessions.waitForTurnCount("r1", 1, { timeoutMs: 60_000 });

  assert.equal((await harness.sessions.getAgentSnapshot("r1")).messages.at(-1)?.text, "Results: parked read done");
  const runs = harness.folder.log.entries().filter((entry) => entry.name === "parked_read");
  assert.deepEqual(runs.map((entry) => entry.details), [{ key: "r1/turn-1/turn-1-call" }, { key: "r1/turn-1/turn-1-call" }]);
  assert.notEqual(runs[0]?.processId, runs[1]?.processId);
  const history = await readStepHistory(harness.engine.address, "r1");
  assert.deepEqual(executes(history, "CallTool").at(-1), ["completed", 2]);
});

void test("a Worker SIGKILLed during an MCP write: the call records outcome_unknown and the server gets it once", { timeout: 300_000 }, async (t) => {
  const harness = await startHarness(t);
  const gate = new FileGate(harness.folder.directory, "parked-write");
  const doomed = await harness.startWorker();
  await harness.sessions.start("w1", { initialMessage: "call notes__parked_write" });
  await gate.waitUntilReached({ timeoutMs: 60_000 });
  await doomed.kill();
  // A wrongful re-issue would pass the open gate, so the log would show it.
  gate.open();
  await harness.startWorker();
  await harness.sessions.waitForTurnCount("w1", 1, { timeoutMs: 60_000 });

  assert.equal((await harness.sessions.getAgentSnapshot("w1")).messages.at(-1)?.text, `Results: ${outcomeUnknownToolResult}`);
  assert.equal(harness.folder.log.count("parked_write"), 1);
  const history = await readStepHistory(harness.engine.address, "w1");
  assert.deepEqual(executes(history, "CallSingleAttemptTool"), [["failed", 1]]);
  assert.deepEqual(executes(history, "RecordToolOutcomeUnknown"), [["completed", 1]]);
});
