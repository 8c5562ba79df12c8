import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { AgentTestEnvironment } from "./agent-test-environment.ts";
import { FileGate } from "./file-gate.ts";
import { InvocationLog } from "./invocation-log.ts";
import { PrivateEngine } from "./private-engine.ts";
import { pollUntil } from "@perdure/engine/testing";
import { readStepHistory } from "./read-step-history.ts";
import { gatedFlow, gatedStepGateName, type GatedFlowInput } from "./test-fixtures/gated-flow.ts";

void test("an environment with an in-process Worker runs a Flow to completion, and readStepHistory shows its Steps", async (t) => {
  const engine = await PrivateEngine.start();
  t.after(() => engine.stop());
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [gatedFlow] });
  t.after(() => environment.close());
  assert.ok(environment.worker !== undefined);
  const input: GatedFlowInput = { gateDirectory: engine.directory, invocationLogPath: join(engine.directory, "invocations.log") };
  new FileGate(engine.directory, gatedStepGateName).open();

  await environment.client.start(gatedFlow, "flow-1", input);
  await pollUntil(async () => (await environment.client.describe("flow-1")).status === "completed", { description: "flow-1 to complete" });

  assert.deepEqual(await readStepHistory(engine.address, "flow-1"), (await environment.client.getStepHistory("flow-1")).map((entry) => ({
    stepType: entry.stepType, method: entry.method, status: entry.status, attempt: entry.attempt, executionId: entry.executionId, error: null,
  })));
  assert.deepEqual((await readStepHistory(engine.address, "flow-1")).map((entry) => [entry.stepType, entry.method, entry.status, entry.attempt]), [
    ["Gated", "execute", "completed", 1],
    ["Finish", "execute", "completed", 1],
  ]);
  assert.equal(new InvocationLog(input.invocationLogPath).count("Gated"), 1);
});

void test("an environment without an in-process Worker leaves started Flows untouched", async (t) => {
  const engine = await PrivateEngine.start();
  t.after(() => engine.stop());
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [gatedFlow], isWorkerInProcess: false });
  t.after(() => environment.close());
  assert.equal(environment.worker, undefined);
  const input: GatedFlowInput = { gateDirectory: engine.directory, invocationLogPath: join(engine.directory, "invocations.log") };
  await environment.client.start(gatedFlow, "flow-1", input);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await environment.client.describe("flow-1")).status, "running");
  assert.deepEqual(await readStepHistory(engine.address, "flow-1"), []);
  assert.equal(new InvocationLog(input.invocationLogPath).count("Gated"), 0);
});

void test("close stops the Worker and closes the store, and may be called twice", async (t) => {
  const engine = await PrivateEngine.start();
  t.after(() => engine.stop());
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [gatedFlow] });
  await environment.close();
  await environment.close();
  await assert.rejects(environment.client.describe("none"), /closed/);
});
