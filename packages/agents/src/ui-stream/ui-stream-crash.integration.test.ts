/**
 * `reset-step` after a Worker process is SIGKILLed during `RunModel`: the
 * killed attempt's partial text reached the browser; the rerun's text
 * replaces it, and the message ends as stored.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { FileGate } from "../testing/file-gate.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { convertAgentSnapshotToUIMessages } from "./agent-ui-messages.ts";
import { TestChat, partsOf, plain } from "./test-fixtures/test-chat.ts";
import { uiStreamCrashDirectoryEnvironmentVariable, uiStreamCrashFlow, uiStreamCrashGateName } from "./test-fixtures/ui-stream-crash-flow.ts";
import { startUIStreamTestServer } from "./test-fixtures/ui-stream-test-server.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/ui-stream-crash-worker-main.ts", import.meta.url));

void test("SIGKILL during RunModel: the stream sends reset-step and the rerun's text replaces the partial text", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [uiStreamCrashFlow], isWorkerInProcess: false });
  const server = await startUIStreamTestServer({ client: environment.client, flow: uiStreamCrashFlow });
  const workers: KillableWorkerProcess[] = [];
  const startWorker = async (): Promise<KillableWorkerProcess> => {
    const worker = await KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address, environment: { [uiStreamCrashDirectoryEnvironmentVariable]: engine.directory } });
    workers.push(worker);
    return worker;
  };
  const chat = new TestChat({ baseUrl: server.baseUrl, chatId: "s1" });
  t.after(async () => {
    await chat.stop();
    for (const worker of workers) await worker.kill();
    await server.close();
    await environment.close();
    await engine.stop();
  });
  const doomed = await startWorker();
  await new AgentSessionTestClient(environment.client, uiStreamCrashFlow).start("s1");
  const sent = chat.sendMessage({ text: "Answer me" });
  await new FileGate(engine.directory, uiStreamCrashGateName).waitUntilReached();
  await pollUntil(async () => {
    const text = chat.messages.at(-1)?.parts.find((part) => part.type === "text");
    return text?.type === "text" && text.text === "Partial draft " ? true : undefined;
  }, { timeoutMs: 10_000, description: "the partial text to reach the chat" });

  await doomed.kill();
  await startWorker();
  await sent;
  await chat.waitUntilSettled();

  assert.equal(chat.status, "ready");
  assert.deepEqual(chat.finishReasons, ["stop"]);
  assert.deepEqual(partsOf(chat.responses[0]?.chunks ?? []).map((chunk) => chunk.type), [
    "start", "start-step", "text-start", "text-delta", "text-delta",
    "reset-step", "text-start", "text-delta", "text-delta", "text-end", "data-agent-event", "finish-step", "finish",
  ]);
  const snapshot = await environment.client.invokeRPC(uiStreamCrashFlow.getAgentSnapshot, "s1");
  const stored = convertAgentSnapshotToUIMessages(snapshot).find((message) => message.id === "turn-1-assistant");
  assert.deepEqual(plain(chat.assistantMessage), plain(stored));
  assert.deepEqual(plain(chat.assistantMessage.parts), [{ type: "step-start" }, { type: "text", text: "Complete answer.", state: "done" }]);
});
