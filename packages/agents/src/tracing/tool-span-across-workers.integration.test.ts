import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { killAndReportWorkerProcesses } from "../testing/test-fixtures/worker-process-cleanup.ts";
import { crossProcessTracingFlow, spansFileName, toolGateName, tracingTestDirectoryVariable } from "./test-fixtures/cross-process-tracing-flow.ts";
import { readFileSpans } from "./test-fixtures/file-span-exporter.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/cross-process-tracing-worker-main.ts", import.meta.url));

void test("a tool Step retried in another Worker process parents its execute_tool span from the record the first process wrote", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [crossProcessTracingFlow], isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await environment.close();
    await engine.stop();
  });
  const startWorkerProcess = async (): Promise<KillableWorkerProcess> => {
    const workerProcess = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [tracingTestDirectoryVariable]: engine.directory } });
    workerProcesses.push(workerProcess);
    return workerProcess;
  };
  const gate = new FileGate(engine.directory, toolGateName);
  const spansPath = join(engine.directory, spansFileName);

  const first = await startWorkerProcess();
  await environment.client.start(crossProcessTracingFlow, "s1", { initial_message: "Where is order 7?" });
  await gate.waitUntilReached();
  await first.kill();
  const second = await startWorkerProcess();
  await pollUntil(async () => {
    const [state] = await environment.client.getAttributes("s1", crossProcessTracingFlow.agentState);
    return state?.turnCount === 1 && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: 30_000, description: "s1 to finish its turn in the second Worker process" });

  const spans = readFileSpans(spansPath);
  const root = spans.find((span) => span.name === "invoke_agent CrossProcess");
  const tools = spans.filter((span) => span.name === "execute_tool lookup_order");
  const chats = spans.filter((span) => span.name === "chat gpt-test");
  assert.ok(root !== undefined, JSON.stringify(spans.map((span) => span.name)));
  assert.equal(root.processId, first.pid);
  // The killed attempt's span never ended, so only the retry's is exported, from the second process.
  assert.equal(tools.length, 1);
  const [tool] = tools as [typeof tools[number]];
  assert.equal(tool.processId, second.pid);
  assert.equal(tool.attributes["perdure.step.attempt"], 2);
  assert.equal(tool.traceId, root.traceId);
  assert.equal(tool.parentSpanId, root.spanId);
  // Both model calls join the root's trace, the first from the first process, the second from the second.
  assert.deepEqual(chats.map((chat) => [chat.processId, chat.traceId, chat.parentSpanId]), [
    [first.pid, root.traceId, root.spanId],
    [second.pid, root.traceId, root.spanId],
  ]);
  const [stored] = await environment.client.getAttributes("s1", crossProcessTracingFlow.agentTraceContext);
  assert.equal(stored, `00-${root.traceId}-${root.spanId}-01`);
});
