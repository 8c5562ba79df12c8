/**
 * `RunModel` and `CompactContext` load only the archive chunks their model
 * input overlaps, the messages after the summary, never the summarized ones
 * before them. Shown on a real SQLite file by damaging a summarized chunk's
 * stored value: later turns, including a compaction, run as before, while
 * `get_agent_snapshot` and a `list_agent_messages` page over that chunk,
 * which load every kept chunk or the ones their page overlaps, fail on it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { AgentSessionTestClient } from "../../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../../testing/agent-test-environment.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import { messageSequenceKey } from "../../contract/values/agent-message.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";
import { CompactingEchoRunner } from "../test-fixtures/message-storage-flows.ts";

/** Overwrites one chunk's stored value with text no codec reads, through a second connection to the store's file. */
function damageChunk(engine: PrivateEngine, flowId: string, firstSequence: number): void {
  const database = new DatabaseSync(join(engine.directory, "engine.db"));
  try {
    const changed = database.prepare("UPDATE attributes SET value = 'damaged chunk' WHERE flow_id = ? AND name = 'AgentMessageChunks' AND key = ?").run(flowId, messageSequenceKey(firstSequence));
    assert.equal(changed.changes, 1, `chunk ${firstSequence} of ${flowId} is stored`);
  } finally {
    database.close();
  }
}

void test("RunModel and CompactContext load only the chunks after the summary: a damaged summarized chunk leaves later turns and compactions running, while the snapshot, which loads every kept chunk, fails on it", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const runner = new CompactingEchoRunner();
  // 10 tokens a message: compaction at 85 messages after the summary, keeping the newest 30; no retention, so every chunk stays.
  const flow = createAgentSessionFlow(runner, "ChunkLoads", { compaction: { contextWindowTokens: 1000 }, retainedMessageLimit: null });
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(environment.client, flow);
  await sessions.startSession("loads", { initialMessage: "turn 1" });
  await sessions.waitForTurnCount("loads", 1);
  let turn = 1;
  // Until the summary covers the first two chunks (messages 1–64) with room to spare.
  for (;;) {
    const [summary] = await environment.client.getAttributes("loads", flow.contextSummary);
    if (summary !== undefined && summary.lastSequence > 96) break;
    assert.ok(turn < 60, "the session compacts past message 96 within 60 turns");
    turn += 1;
    assert.equal(await sessions.sendUserMessage("loads", `turn ${turn}`), true);
    await sessions.waitForTurnCount("loads", turn);
  }
  const [index] = await environment.client.getAttributes("loads", flow.agentMessageIndex);
  assert.deepEqual(index?.chunks.slice(0, 2), [{ firstSequence: 1, lastSequence: 32 }, { firstSequence: 33, lastSequence: 64 }]);
  damageChunk(engine, "loads", 1);

  // 16 more turns, long enough for another compaction (every 14 turns or so): none of their Steps reads chunk 1.
  const summariesBefore = runner.summaryCalls;
  for (let more = 0; more < 16; more += 1) {
    turn += 1;
    assert.equal(await sessions.sendUserMessage("loads", `turn ${turn}`), true);
    const state = await sessions.waitForTurnCount("loads", turn);
    assert.equal(state.lastTurnError, null, `turn ${turn} ran without reading the damaged chunk`);
  }
  assert.ok(runner.summaryCalls > summariesBefore, "a CompactContext ran after the damage");
  const [state] = await environment.client.getAttributes("loads", flow.agentState);
  assert.equal(state?.messageCount, 4 * turn);

  // Readers that load every kept chunk, or the chunk their page overlaps, do read it.
  await assert.rejects(environment.client.invokeRPC(flow.getAgentSnapshot, "loads"));
  await assert.rejects(environment.client.invokeRPC(flow.listAgentMessages, "loads", { beforeSequence: 20, limit: 10 }));
  const recent = await environment.client.invokeRPC(flow.listAgentMessages, "loads", { beforeSequence: null, limit: 50 });
  assert.deepEqual(recent.messages.map((message) => message.sequence), Array.from({ length: 50 }, (_unused, offset) => 4 * turn - 49 + offset), "a page after the damaged chunk reads fine");
});
