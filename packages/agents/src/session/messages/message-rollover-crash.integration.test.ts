/**
 * A Worker child process SIGKILLed between the Steps of a backlog's
 * rollover: AwaitUserMessage moved the first chunks of a 0.1.0 backlog and
 * RunModel is in its model call. Every reader sees every message at the
 * kill, and a new process finishes the turn and the move.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { KillableWorkerProcess } from "../../testing/killable-worker-process.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import { killAndReportWorkerProcesses } from "../../testing/test-fixtures/worker-process-cleanup.ts";
import { AgentSessionRecordReader } from "../../ui-stream/agent-session-record-reader.ts";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { assertStoredMessageLayout, readStoredMessageLayout } from "../test-fixtures/message-storage-inspection.ts";
import {
  bulkReplyText,
  bulkRequestText,
  createBulkReplyFlow,
  messageStorageDirectoryEnvironmentVariable,
  rolloverCrashFlow,
  rolloverCrashFlowType,
  unmovedWindowOptions,
} from "../test-fixtures/message-storage-flows.ts";

const entryModulePath = fileURLToPath(new URL("../test-fixtures/rollover-crash-worker-main.ts", import.meta.url));
const limits = { messageChunkSize: 32, messageChunkMaxBytes: 1024 * 1024 };

function waitForTurns(client: Client, flow: AgentSessionFlow, flowId: string, turnCount: number): Promise<AgentState> {
  return pollUntil(async () => {
    const [state] = await client.getAttributes(flowId, flow.agentState);
    return state !== undefined && state.turnCount >= turnCount && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: 20_000, intervalMs: 10, description: `${flowId} to finish ${turnCount} turn(s)` });
}

async function assertReadersSeeEveryMessage(client: Client, flow: AgentSessionFlow, flowId: string, messageCount: number): Promise<void> {
  const expected = Array.from({ length: messageCount }, (_unused, offset) => offset + 1);
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, flowId);
  assert.deepEqual(snapshot.messages.map((message) => message.sequence), expected, "the snapshot has every message once, in order");
  const pages: AgentMessagePage[] = [];
  let beforeSequence: number | null = null;
  for (;;) {
    const page: AgentMessagePage = await client.invokeRPC(flow.listAgentMessages, flowId, { beforeSequence, limit: 200 });
    pages.push(page);
    if (page.nextBeforeSequence === null) break;
    beforeSequence = page.nextBeforeSequence;
  }
  assert.deepEqual(pages.toReversed().flatMap((page) => page.messages), snapshot.messages, "paging reads the same messages");
  assert.ok(pages.every((page) => page.deletedBeforeSequence === null));
}

void test("SIGKILL between the Steps of a backlog's rollover leaves every reader correct, and a new Worker finishes the turn and the move", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const observer = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [rolloverCrashFlow], isWorkerInProcess: false });
  const workerProcesses: KillableWorkerProcess[] = [];
  t.after(async () => {
    await killAndReportWorkerProcesses(t, workerProcesses);
    await observer.close();
    await engine.stop();
  });
  // A 0.1.0-style session: 1,000 messages, all in AgentMessages, no index.
  const old = createBulkReplyFlow(rolloverCrashFlowType, unmovedWindowOptions);
  const oldWorker = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [old] });
  await oldWorker.client.start(old, "k1", { initial_message: bulkRequestText({ replies: 999, bytes: 200 }) });
  await waitForTurns(oldWorker.client, old, "k1", 1);
  await oldWorker.close();
  assert.equal(readStoredMessageLayout(engine, "k1").index, undefined);

  const startWorkerProcess = async (): Promise<KillableWorkerProcess> => {
    const workerProcess = await KillableWorkerProcess.start({
      entryModulePath,
      engineAddress: engine.address,
      environment: { [messageStorageDirectoryEnvironmentVariable]: engine.directory },
    });
    workerProcesses.push(workerProcess);
    return workerProcess;
  };
  const flow = rolloverCrashFlow;
  const doomed = await startWorkerProcess();
  const gate = new FileGate(engine.directory, "rollover-kill");
  await observer.client.invokeRPC(flow.sendUserMessage, "k1", { text: bulkRequestText({ replies: 1, bytes: 10, gate: "rollover-kill" }) });
  await gate.waitUntilReached();
  await doomed.kill();

  // AwaitUserMessage's commit moved 4 chunks; RunModel's never came.
  let layout = readStoredMessageLayout(engine, "k1");
  assert.equal(layout.index?.chunks.length, 4);
  assert.equal(layout.index?.windowFirstSequence, 129);
  assertStoredMessageLayout(layout, 1001, limits);
  await assertReadersSeeEveryMessage(observer.client, flow, "k1", 1001);
  const reader = new AgentSessionRecordReader({ client: observer.client, flow, flowId: "k1" }, undefined);
  assert.deepEqual(await reader.readTurnStatus("turn-2", [], false), { isEnded: false, awaitingPeople: null });

  await startWorkerProcess();
  const state = await waitForTurns(observer.client, flow, "k1", 2);
  assert.equal(state.messageCount, 1002);
  assert.equal(state.lastTurnError, null);
  layout = readStoredMessageLayout(engine, "k1");
  assert.equal(layout.index?.chunks.length, 8, "the rerun's commit moved 4 more chunks");
  assertStoredMessageLayout(layout, 1002, limits);
  await assertReadersSeeEveryMessage(observer.client, flow, "k1", 1002);
  const snapshot = await observer.client.invokeRPC(flow.getAgentSnapshot, "k1");
  assert.equal(snapshot.messages.at(-1)?.text, bulkReplyText(1, 10));
  // The first turn's model saw its 1 message; the rerun saw all 1,001 (the killed attempt recorded nothing).
  assert.equal(snapshot.usage.inputTokens, 1 + 1001);
  const events = (await observer.client.readStream("k1", flow.agentEvents, { limit: 1000 })).messages.map((message) => message.value);
  assert.deepEqual(events.filter((event) => event.type === "turn_completed").map((event) => [event.turnId, event.payload]), [
    ["turn-1", { message_count: 999 }],
    ["turn-2", { message_count: 1 }],
  ]);
  assert.deepEqual(await reader.readTurnStatus("turn-2", [], false), { isEnded: true, awaitingPeople: null });
});
