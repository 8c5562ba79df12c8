/**
 * Real Worker child processes on a private engine: one is SIGKILLed while its
 * Step is parked at a FileGate and a second process finishes the Flow; one is
 * stopped with SIGTERM and drains its running Step first.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { InvalidInputError } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "./agent-test-environment.ts";
import { FileGate } from "./file-gate.ts";
import { InvocationLog } from "./invocation-log.ts";
import { KillableWorkerProcess } from "./killable-worker-process.ts";
import { PrivateEngine } from "./private-engine.ts";
import { readStepHistory } from "./read-step-history.ts";
import { gatedFlow, gatedStepGateName, type GatedFlowInput } from "./test-fixtures/gated-flow.ts";
import { killAndReportWorkerProcesses } from "./test-fixtures/worker-process-cleanup.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/agent-worker-main.ts", import.meta.url));

interface Harness {
  engine: PrivateEngine;
  environment: AgentTestEnvironment;
  input: GatedFlowInput;
  gate: FileGate;
  invocationLog: InvocationLog;
  startWorkerProcess(): Promise<KillableWorkerProcess>;
}

async function setUp(t: TestContext): Promise<Harness> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [gatedFlow], isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  const input: GatedFlowInput = { gateDirectory: engine.directory, invocationLogPath: join(engine.directory, "invocations.log") };
  return {
    engine,
    environment,
    input,
    gate: new FileGate(input.gateDirectory, gatedStepGateName),
    invocationLog: new InvocationLog(input.invocationLogPath),
    startWorkerProcess: async () => {
      const workerProcess = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address });
      workerProcesses.push(workerProcess);
      return workerProcess;
    },
  };
}

void test("a Worker process SIGKILLed while its Step waits at a FileGate loses the attempt, and a second process finishes the Flow", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const doomed = await harness.startWorkerProcess();
  assert.notEqual(doomed.workerId, "", "the ready line carries the Worker ID");
  await harness.environment.client.start(gatedFlow, "flow-1", harness.input);
  await harness.gate.waitUntilReached();

  await doomed.kill();
  assert.equal(await doomed.exited, "SIGKILL");
  assert.throws(() => process.kill(doomed.pid, 0), { code: "ESRCH" }, "the killed process is gone");
  assert.deepEqual(harness.invocationLog.entries().map((entry) => [entry.name, entry.processId]), [["Gated", doomed.pid]], "the killed child's line is kept");

  const survivor = await harness.startWorkerProcess();
  assert.notEqual(survivor.workerId, doomed.workerId);
  harness.gate.open();
  await pollUntil(async () => (await harness.environment.client.describe("flow-1")).status === "completed", { timeoutMs: 15_000, description: "flow-1 to complete" });

  assert.deepEqual(harness.invocationLog.entries().map((entry) => [entry.name, entry.processId, entry.details]), [
    ["Gated", doomed.pid, { attempt: 1 }],
    ["Gated", survivor.pid, { attempt: 2 }],
    ["Finish", survivor.pid, undefined],
  ]);
  assert.deepEqual(harness.gate.arrivals().map((arrival) => arrival.processId), [doomed.pid, survivor.pid], "the FileGate saw both processes arrive");
  const history = await readStepHistory(harness.engine.address, "flow-1");
  assert.deepEqual(history.map((entry) => [entry.stepType, entry.method, entry.status, entry.attempt]), [
    ["Gated", "execute", "failed", 1],
    ["Gated", "execute", "completed", 2],
    ["Finish", "execute", "completed", 1],
  ]);
  assert.match(history[0]?.error ?? "", /^WorkerLost: /);
  assert.equal(history[0]?.executionId, history[1]?.executionId, "the retry belongs to the same execution");
  assert.equal(await survivor.stop(), 0, "the survivor drains and exits 0 on SIGTERM");
});

void test("stop drains a Worker process: its running Step commits before the process exits 0", { timeout: 300_000 }, async (t) => {
  const harness = await setUp(t);
  const draining = await harness.startWorkerProcess();
  await harness.environment.client.start(gatedFlow, "flow-1", harness.input);
  await harness.gate.waitUntilReached();

  let exitedEarly = false;
  const stopping = draining.stop().finally(() => { exitedEarly = !harness.gate.isOpen(); });
  await delay(200);
  assert.equal(exitedEarly, false, "the process waits for its running Step");
  harness.gate.open();
  assert.equal(await stopping, 0);
  assert.equal(exitedEarly, false);

  const history = await readStepHistory(harness.engine.address, "flow-1");
  assert.deepEqual(history.map((entry) => [entry.stepType, entry.status, entry.attempt]), [["Gated", "completed", 1]], "Gated committed; Finish was never claimed");
  assert.equal((await harness.environment.client.describe("flow-1")).status, "running");
});

void test("start rejects an engine address that is not sqlite:<absolute path> before spawning anything", async () => {
  await assert.rejects(KillableWorkerProcess.start({ entryModulePath, engineAddress: "postgres://localhost/perdure" }), InvalidInputError);
});
