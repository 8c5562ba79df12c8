/**
 * Retention over a long compacting session on a real SQLite file: 800
 * turns of four messages each (3,200 messages), compacting through the real
 * `CompactContext`, keep a bounded window and bounded chunks; the oldest
 * chunks are deleted only once summarized and followed by
 * `retainedMessageLimit` messages; paging ends at the oldest stored message
 * and says where deleted history ends.
 */
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import { agentSnapshotToWire } from "../../contract/values/agent-snapshot.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { createAgentSessionFlow, type AgentSessionFlow } from "../create-agent-session-flow.ts";
import { assertStoredMessageLayout, readStoredMessageLayout } from "../test-fixtures/message-storage-inspection.ts";
import { CompactingEchoRunner, ParkingLookupRunner } from "../test-fixtures/message-storage-flows.ts";
import { deletedHistoryWarning } from "./deleted-history-warning.ts";

let engine: PrivateEngine;
const environments: AgentTestEnvironment[] = [];

before(async () => {
  engine = await PrivateEngine.start();
});

after(async () => {
  for (const environment of environments) await environment.close();
  await engine.stop();
});

function waitForTurns(client: Client, flow: AgentSessionFlow, flowId: string, turnCount: number): Promise<AgentState> {
  return pollUntil(async () => {
    const [state] = await client.getAttributes(flowId, flow.agentState);
    return state !== undefined && state.turnCount >= turnCount && state.activeTurnId === null ? state : undefined;
  }, { timeoutMs: 30_000, intervalMs: 2, description: `${flowId} to finish ${turnCount} turn(s)` });
}

it("800 compacting turns keep 64 window messages and 30 chunks, delete only summarized chunks with 1,000 messages after them, and page to the deleted boundary", { timeout: 300_000 }, async (t) => {
  const runner = new CompactingEchoRunner();
  // 10 tokens a message: compaction at 85 messages after the summary, keeping the newest 30.
  const flow = createAgentSessionFlow(runner, "LongSession", { compaction: { contextWindowTokens: 1000 } });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  environments.push(environment);
  const { client } = environment;
  const startedAt = Date.now();
  await client.start(flow, "long", { initial_message: "turn 1" });
  let state = await waitForTurns(client, flow, "long", 1);
  for (let turn = 2; turn <= 800; turn += 1) {
    await client.invokeRPC(flow.sendUserMessage, "long", { text: `turn ${turn}` });
    state = await waitForTurns(client, flow, "long", turn);
  }
  t.diagnostic(`800 turns in ${Date.now() - startedAt} ms, ${runner.summaryCalls} summaries`);
  assert.equal(state.messageCount, 3200);
  assert.equal(state.lastTurnError, null);
  assert.ok(runner.summaryCalls >= 50, `the session compacted ${runner.summaryCalls} times`);

  const [summary] = await client.getAttributes("long", flow.contextSummary);
  assert.ok(summary !== undefined && summary.lastSequence >= 3200 - 85, `the summary covers through ${summary?.lastSequence}`);
  const layout = readStoredMessageLayout(engine, "long");
  assertStoredMessageLayout(layout, 3200, { messageChunkSize: 32, messageChunkMaxBytes: 1024 * 1024 });
  // 98 chunks of 32 were written; the 68 oldest each had 1,000 or more messages after them (3,200 - 2,176),
  // and deleting the 69th would leave 992.
  assert.deepEqual(layout.index && { ...layout.index, chunks: layout.index.chunks.length }, { chunks: 30, firstSequence: 2177, windowFirstSequence: 3137 });
  assert.equal(layout.windowSequences.length, 64);
  assert.equal(layout.chunks.size, 30, "deleted chunks left the store");
  assert.equal(layout.index?.chunks[0]?.firstSequence, 2177);

  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, "long");
  // The contract gives deleted_before_sequence to pages only; the snapshot's messages start at the oldest stored one.
  assert.ok(!("deletedBeforeSequence" in snapshot));
  assert.ok(!("deleted_before_sequence" in agentSnapshotToWire(snapshot)));
  assert.deepEqual(snapshot.messages.map((message) => message.sequence), Array.from({ length: 1024 }, (_unused, offset) => 2177 + offset));
  assert.equal(snapshot.contextSummary?.lastSequence, summary.lastSequence);

  const pages: AgentMessagePage[] = [];
  let beforeSequence: number | null = null;
  for (;;) {
    const page: AgentMessagePage = await client.invokeRPC(flow.listAgentMessages, "long", { beforeSequence, limit: 200 });
    pages.push(page);
    if (page.nextBeforeSequence === null) break;
    beforeSequence = page.nextBeforeSequence;
  }
  assert.equal(pages.length, 6, "1,024 stored messages in pages of 200");
  assert.ok(pages.every((page) => page.deletedBeforeSequence === 2177), "every page says where the deleted history ends");
  assert.deepEqual(pages.toReversed().flatMap((page) => page.messages).map((message) => message.sequence), snapshot.messages.map((message) => message.sequence));
  assert.equal(pages.at(-1)?.messages[0]?.sequence, 2177, "paging ends at the oldest stored message");
  const acrossBoundary = await client.invokeRPC(flow.listAgentMessages, "long", { beforeSequence: 2200, limit: 50 });
  assert.deepEqual(acrossBoundary.messages.map((message) => message.sequence), Array.from({ length: 23 }, (_unused, offset) => 2177 + offset));
  assert.deepEqual([acrossBoundary.nextBeforeSequence, acrossBoundary.deletedBeforeSequence], [null, 2177]);
  const deleted = await client.invokeRPC(flow.listAgentMessages, "long", { beforeSequence: 2000, limit: 50 });
  assert.deepEqual(deleted, { messages: [], nextBeforeSequence: null, deletedBeforeSequence: 2177 });
  const [deletedChunk, keptChunk] = await client.getAttributes("long", flow.agentMessageChunks.instance("000000002145"), flow.agentMessageChunks.instance("000000002177"));
  assert.equal(deletedChunk, undefined);
  assert.equal(keptChunk?.messages[0]?.sequence, 2177);
  await environment.close();

  // The same session on a Worker whose runner has no compaction methods: its model input starts at the oldest stored message, with a warning per model call.
  const plainRunner = new ParkingLookupRunner();
  const plain = createAgentSessionFlow(plainRunner, "LongSession");
  const plainEnvironment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [plain] });
  environments.push(plainEnvironment);
  const warn = t.mock.method(console, "warn", () => undefined);
  await plainEnvironment.client.invokeRPC(plain.sendUserMessage, "long", { text: "turn 801" });
  await waitForTurns(plainEnvironment.client, plain, "long", 801);
  const warnings = warn.mock.calls.map((call) => String(call.arguments[0]));
  assert.deepEqual(warnings, [deletedHistoryWarning("long", 2177), deletedHistoryWarning("long", 2177)], "one warning for each of the turn's two model calls");
  assert.deepEqual(plainRunner.inputFirstSequences, [2177, 2177]);
});
