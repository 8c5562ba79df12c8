/**
 * The message window and its archive chunks on a real SQLite file: rollover
 * counts, oversized messages, the per-commit bounds on a large 0.1.0
 * backlog, and the readers (`list_agent_messages`, `get_agent_snapshot`,
 * the UI stream's record reader) on new, unmoved and half-moved sessions.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { FileGate } from "../../testing/file-gate.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import { AgentSessionRecordReader } from "../../ui-stream/agent-session-record-reader.ts";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { assertStoredMessageLayout, readStoredMessageLayout } from "../test-fixtures/message-storage-inspection.ts";
import {
  bulkReplyText,
  bulkRequestText,
  createBulkReplyFlow,
  createParkingLookupFlow,
  messageStorageDirectoryEnvironmentVariable,
  unmovedWindowOptions,
} from "../test-fixtures/message-storage-flows.ts";

const defaultLimits = { messageChunkSize: 32, messageChunkMaxBytes: 1024 * 1024 };

let engine: PrivateEngine;
const environments: AgentTestEnvironment[] = [];

before(async () => {
  engine = await PrivateEngine.start();
  process.env[messageStorageDirectoryEnvironmentVariable] = engine.directory;
});

after(async () => {
  for (const environment of environments) await environment.close();
  await engine.stop();
});

async function startWorker(flow: AgentSessionFlow): Promise<AgentTestEnvironment> {
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  environments.push(environment);
  return environment;
}

function waitForTurns(client: Client, flow: AgentSessionFlow, flowId: string, turnCount: number): Promise<AgentState> {
  return pollUntil(async () => {
    const [state] = await client.getAttributes(flowId, flow.agentState);
    return state !== undefined && state.turnCount >= turnCount && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: 30_000, intervalMs: 10, description: `${flowId} to finish ${turnCount} turn(s)` });
}

async function sendAndWait(client: Client, flow: AgentSessionFlow, flowId: string, text: string, turnCount: number): Promise<AgentState> {
  assert.equal(await client.invokeRPC(flow.sendUserMessage, flowId, { text }), true);
  return waitForTurns(client, flow, flowId, turnCount);
}

/** Every page of `list_agent_messages` from the newest, and the messages they hold, oldest first. */
async function pageBackwards(client: Client, flow: AgentSessionFlow, flowId: string, limit: number) {
  const pages: AgentMessagePage[] = [];
  let beforeSequence: number | null = null;
  for (;;) {
    const page: AgentMessagePage = await client.invokeRPC(flow.listAgentMessages, flowId, { beforeSequence, limit });
    pages.push(page);
    if (page.nextBeforeSequence === null) break;
    beforeSequence = page.nextBeforeSequence;
  }
  return { pages, messages: pages.toReversed().flatMap((page) => page.messages) };
}

function sequencesOf(messages: readonly AgentMessage[]): number[] {
  return messages.map((message) => message.sequence);
}

function oneToN(count: number): number[] {
  return Array.from({ length: count }, (_unused, offset) => offset + 1);
}

/** Both readers return every stored message once, in order, from one committed state. */
async function assertReadersSeeEveryMessage(client: Client, flow: AgentSessionFlow, flowId: string, messageCount: number): Promise<void> {
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, flowId);
  assert.deepEqual(sequencesOf(snapshot.messages), oneToN(messageCount), "the snapshot has every message in order");
  assert.ok(!("deletedBeforeSequence" in snapshot), "only list_agent_messages pages say where deleted history ends");
  const paged = await pageBackwards(client, flow, flowId, 50);
  assert.deepEqual(sequencesOf(paged.messages), oneToN(messageCount), "paging by 50 returns every message once, in order");
  assert.ok(paged.pages.every((page) => page.deletedBeforeSequence === null));
  assert.deepEqual(paged.messages, snapshot.messages, "pages and the snapshot read the same messages");
}

describe("message window and archive chunks", () => {
  it("a window past 64 messages moves its oldest into chunks of 32 in the same commit; a backlog drains 4 chunks per commit", async () => {
    const flow = createBulkReplyFlow("RolloverCounts");
    const { client } = await startWorker(flow);
    await client.start(flow, "r1", { initial_message: bulkRequestText({ replies: 63, bytes: 10 }) });
    await waitForTurns(client, flow, "r1", 1);
    let layout = readStoredMessageLayout(engine, "r1");
    assert.equal(layout.index, undefined, "64 messages fit the window: no index yet");
    assert.deepEqual(layout.windowSequences, oneToN(64));

    // The 65th message (the user's) rolls 1-32 over in AwaitUserMessage's commit; the answer is the 66th.
    await sendAndWait(client, flow, "r1", "hello", 2);
    layout = readStoredMessageLayout(engine, "r1");
    assert.deepEqual(layout.index, { chunks: [{ firstSequence: 1, lastSequence: 32 }], firstSequence: 1, windowFirstSequence: 33 });
    assertStoredMessageLayout(layout, 66, defaultLimits);

    // 200 answers in one commit: that commit moves only 4 chunks, and the next append moves the rest.
    await sendAndWait(client, flow, "r1", bulkRequestText({ replies: 200, bytes: 10 }), 3);
    layout = readStoredMessageLayout(engine, "r1");
    assert.equal(layout.index?.chunks.length, 5, "one chunk before, four in the commit that stored 200 answers");
    assert.equal(layout.index?.windowFirstSequence, 161);
    assert.equal(layout.windowSequences.length, 107, "the window stays over its size until it drains");
    assertStoredMessageLayout(layout, 267, defaultLimits);
    const state = await sendAndWait(client, flow, "r1", "hello again", 4);
    assert.equal(state.messageCount, 269);
    layout = readStoredMessageLayout(engine, "r1");
    assert.deepEqual(layout.index?.chunks.map((chunk) => [chunk.firstSequence, chunk.lastSequence]), [
      [1, 32], [33, 64], [65, 96], [97, 128], [129, 160], [161, 192], [193, 224],
    ]);
    assert.equal(layout.index?.windowFirstSequence, 225);
    assertStoredMessageLayout(layout, 269, defaultLimits);
    const snapshot = await client.invokeRPC(flow.getAgentSnapshot, "r1");
    assert.equal(snapshot.messages.at(-1)?.text, "answer to hello again after 268 messages", "the model input held every message, chunks and window");
    assert.equal(snapshot.messages[100]?.text, bulkReplyText(34, 10));
    await assertReadersSeeEveryMessage(client, flow, "r1", 269);
  });

  it("an oversized message goes straight into its own chunk and a later rollover closes its chunk before it", async () => {
    const flow = createBulkReplyFlow("Oversized", { messageChunkMaxBytes: 4096 });
    const { client } = await startWorker(flow);
    await client.start(flow, "o1", { initial_message: bulkRequestText({ replies: 3, bytes: 5000 }) });
    await waitForTurns(client, flow, "o1", 1);
    let layout = readStoredMessageLayout(engine, "o1");
    assert.deepEqual(layout.index, {
      chunks: [{ firstSequence: 2, lastSequence: 2 }, { firstSequence: 3, lastSequence: 3 }, { firstSequence: 4, lastSequence: 4 }],
      firstSequence: 1,
      windowFirstSequence: 1,
    });
    assert.deepEqual(layout.windowSequences, [1], "only the small user message is in the window");
    assert.ok([...layout.chunks.values()].every((stored) => stored.bytes > 4096), "each chunk of one is over messageChunkMaxBytes");
    assertStoredMessageLayout(layout, 4, { messageChunkSize: 32, messageChunkMaxBytes: 4096 });

    await sendAndWait(client, flow, "o1", bulkRequestText({ replies: 70, bytes: 10 }), 2);
    layout = readStoredMessageLayout(engine, "o1");
    // Message 1's chunk closes before the oversized 2; the next one closes at 4,096 bytes, before 32 messages.
    assert.deepEqual(layout.index?.chunks.map((chunk) => [chunk.firstSequence, chunk.lastSequence]), [[1, 1], [2, 2], [3, 3], [4, 4], [5, 33]]);
    assert.equal(layout.index?.windowFirstSequence, 34);
    assertStoredMessageLayout(layout, 75, { messageChunkSize: 32, messageChunkMaxBytes: 4096 });
    const state = await sendAndWait(client, flow, "o1", "and now?", 3);
    const snapshot = await client.invokeRPC(flow.getAgentSnapshot, "o1");
    assert.equal(snapshot.messages.at(-1)?.text, `answer to and now? after ${state.messageCount - 1} messages`);
    assert.equal(snapshot.messages[2]?.text, bulkReplyText(2, 5000));
    await assertReadersSeeEveryMessage(client, flow, "o1", state.messageCount);
  });

  it("a message too large for the store fails its turn when it is first stored", async () => {
    const flow = createBulkReplyFlow("TooLarge");
    const { client } = await startWorker(flow);
    await client.start(flow, "t1", { initial_message: bulkRequestText({ replies: 1, bytes: 17 * 1024 * 1024 }) });
    const state = await waitForTurns(client, flow, "t1", 1);
    assert.match(state.lastTurnError ?? "", /AgentMessageChunks/, `the turn failed on the chunk write: ${state.lastTurnError}`);
    assert.equal(state.messageCount, 1, "only the user message is stored");
    assert.deepEqual(readStoredMessageLayout(engine, "t1").windowSequences, [1]);
  });

  it("a 0.1.0 backlog of 1,000 messages moves at most 4 chunks per commit, and readers and model input see every message while it is half moved", async () => {
    const old = createBulkReplyFlow("Upgrade", unmovedWindowOptions);
    const oldWorker = await startWorker(old);
    await oldWorker.client.start(old, "u1", { initial_message: bulkRequestText({ replies: 999, bytes: 100 }) });
    await waitForTurns(oldWorker.client, old, "u1", 1);
    await oldWorker.close();
    let layout = readStoredMessageLayout(engine, "u1");
    assert.equal(layout.index, undefined);
    assert.equal(layout.windowSequences.length, 1000, "the 0.1.0 layout: every message in AgentMessages, no index");

    const flow = createBulkReplyFlow("Upgrade");
    const { client } = await startWorker(flow);
    await assertReadersSeeEveryMessage(client, flow, "u1", 1000);
    const gate = new FileGate(engine.directory, "upgrade-u1");
    await client.invokeRPC(flow.sendUserMessage, "u1", { text: bulkRequestText({ replies: 1, bytes: 10, gate: "upgrade-u1" }) });
    await gate.waitUntilReached();
    // AwaitUserMessage stored the 1,001st message and moved the first 4 chunks; RunModel waits at the gate.
    layout = readStoredMessageLayout(engine, "u1");
    assert.deepEqual(layout.index, {
      chunks: [{ firstSequence: 1, lastSequence: 32 }, { firstSequence: 33, lastSequence: 64 }, { firstSequence: 65, lastSequence: 96 }, { firstSequence: 97, lastSequence: 128 }],
      firstSequence: 1,
      windowFirstSequence: 129,
    });
    assert.equal(layout.windowSequences.length, 873);
    assertStoredMessageLayout(layout, 1001, defaultLimits);
    await assertReadersSeeEveryMessage(client, flow, "u1", 1001);
    gate.open();
    await waitForTurns(client, flow, "u1", 2);
    layout = readStoredMessageLayout(engine, "u1");
    assert.equal(layout.index?.chunks.length, 8, "the answer's commit moved 4 more");
    assertStoredMessageLayout(layout, 1002, defaultLimits);
    const snapshot = await client.invokeRPC(flow.getAgentSnapshot, "u1");
    assert.equal(snapshot.messages.at(-1)?.text, bulkReplyText(1, 10));
    const next = await sendAndWait(client, flow, "u1", "count them", 3);
    const answer = (await client.invokeRPC(flow.getAgentSnapshot, "u1")).messages.at(-1);
    assert.equal(answer?.text, `answer to count them after ${next.messageCount - 1} messages`, "the model input spans the moved chunks and the window");
    await assertReadersSeeEveryMessage(client, flow, "u1", next.messageCount);
  });

  it("one commit moves at most 8 MiB of chunks", async () => {
    const old = createBulkReplyFlow("UpgradeBytes", { ...unmovedWindowOptions, messageChunkMaxBytes: 8 * 1024 * 1024 });
    const oldWorker = await startWorker(old);
    await oldWorker.client.start(old, "b1", { initial_message: bulkRequestText({ replies: 20, bytes: 900_000 }) });
    await waitForTurns(oldWorker.client, old, "b1", 1);
    await oldWorker.close();

    const limits = { messageWindowSize: 4, messageChunkSize: 4, messageChunkMaxBytes: 3_670_016 };
    const flow = createBulkReplyFlow("UpgradeBytes", limits);
    const { client } = await startWorker(flow);
    const gate = new FileGate(engine.directory, "upgrade-b1");
    await client.invokeRPC(flow.sendUserMessage, "b1", { text: bulkRequestText({ replies: 1, bytes: 10, gate: "upgrade-b1" }) });
    await gate.waitUntilReached();
    // Chunks of 4 messages of 900 KB are 3.6 MB: a third would take the commit past 8 MiB.
    const layout = readStoredMessageLayout(engine, "b1");
    assert.deepEqual(layout.index?.chunks.map((chunk) => [chunk.firstSequence, chunk.lastSequence]), [[1, 4], [5, 8]]);
    const movedBytes = [...layout.chunks.values()].reduce((sum, stored) => sum + stored.bytes, 0);
    assert.ok(movedBytes <= 8 * 1024 * 1024 && movedBytes + 3_600_000 > 8 * 1024 * 1024, `the commit moved ${movedBytes} bytes`);
    assertStoredMessageLayout(layout, 22, limits);
    gate.open();
    const state = await waitForTurns(client, flow, "b1", 2);
    assertStoredMessageLayout(readStoredMessageLayout(engine, "b1"), state.messageCount, limits);
    await assertReadersSeeEveryMessage(client, flow, "b1", state.messageCount);
  });

  it("the UI stream's record reader finds a past turn's tool call in an unmoved, a half-moved and a moved session", async () => {
    const old = createParkingLookupFlow("ReaderUpgrade", unmovedWindowOptions);
    const oldWorker = await startWorker(old);
    await oldWorker.client.start(old, "ui1", { initial_message: "turn one" });
    await waitForTurns(oldWorker.client, old, "ui1", 1);
    for (let turn = 2; turn <= 60; turn += 1) await sendAndWait(oldWorker.client, old, "ui1", `turn ${turn}`, turn);
    await oldWorker.close();

    const flow = createParkingLookupFlow("ReaderUpgrade");
    const { client } = await startWorker(flow);
    const reader = new AgentSessionRecordReader({ client, flow, flowId: "ui1" }, undefined);
    const expectOutcome = async (turnNumber: number) => {
      assert.deepEqual(await reader.readToolOutcomeNow(`turn-${turnNumber}`, `turn-${turnNumber}-call-1-0`), { kind: "stored", text: `order turn-${turnNumber}: shipped` });
    };
    assert.equal(readStoredMessageLayout(engine, "ui1").index, undefined);
    await expectOutcome(60);
    await expectOutcome(55);

    const gate = new FileGate(engine.directory, "reader-ui1");
    await client.invokeRPC(flow.sendUserMessage, "ui1", { text: "park reader-ui1" });
    await gate.waitUntilReached();
    const halfMoved = readStoredMessageLayout(engine, "ui1");
    assert.equal(halfMoved.index?.windowFirstSequence, 129, "the first 4 chunks moved; the window is still over its size");
    assert.equal(halfMoved.windowSequences.length, 113);
    await expectOutcome(60);
    await expectOutcome(55);
    gate.open();
    await waitForTurns(client, flow, "ui1", 61);
    for (let turn = 62; turn <= 64; turn += 1) await sendAndWait(client, flow, "ui1", `turn ${turn}`, turn);
    const moved = readStoredMessageLayout(engine, "ui1");
    assert.ok(moved.windowSequences.length <= 64, "the backlog drained");
    assert.ok((moved.index?.windowFirstSequence ?? 0) > 180, "turn 45's messages are in chunks");
    await expectOutcome(45);
    await expectOutcome(64);
    await assertReadersSeeEveryMessage(client, flow, "ui1", 256);
  });
});
