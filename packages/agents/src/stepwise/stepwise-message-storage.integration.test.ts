/**
 * A Stepwise definition's message storage fields reach the session options:
 * a compacting agent with a window of 4 and chunks of 2 archives its
 * messages that way, `retainedMessageLimit: null` keeps every message while
 * a limit of 4 deletes the summarized chunks, and a bad value is refused
 * when the Flow is built.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { contextSummaryInstructions } from "./compaction/context-summary-texts.ts";
import { ScriptedModelClient } from "./scripted-model-client.ts";
import type { AgentDefinition } from "./agent-definition.ts";
import { startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

const filler = "The customer asked about the delivery window of a parcel and the refund policy for damaged goods. ";

function compactingDefinition(retainedMessageLimit: number | null): AgentDefinition {
  const model = new ScriptedModelClient((request) => (request.instructions === contextSummaryInstructions ? { text: "SUMMARY" } : { text: `Answer: ${filler}` }));
  return { name: "storage", instructions: "Answer.", model, compaction: { contextWindowTokens: 1_000 }, messageWindowSize: 4, messageChunkSize: 2, retainedMessageLimit };
}

/** Turns until the session has compacted twice, so its summary covers more than one chunk. */
async function runUntilSecondSummary(sessions: AgentSessionTestClient, sessionId: string): Promise<number> {
  await sessions.startSession(sessionId, { initialMessage: `question 1: ${filler}` });
  await sessions.waitForTurnCount(sessionId, 1);
  let turns = 1;
  while (((await sessions.getAgentSnapshot(sessionId)).contextSummary?.generation ?? 0) < 2) {
    assert.ok(turns < 30, `${sessionId} compacts twice within 30 turns`);
    turns += 1;
    assert.equal(await sessions.sendUserMessage(sessionId, `question ${turns}: ${filler}`), true);
    await sessions.waitForTurnCount(sessionId, turns);
  }
  return turns;
}

void test("a Stepwise definition's messageWindowSize, messageChunkSize and retainedMessageLimit shape its message storage, and a bad value is refused", { timeout: 300_000 }, async (t) => {
  const keepAll = createStepwiseAgentSessionFlow(compactingDefinition(null), "StorageKeepAll");
  const keepFour = createStepwiseAgentSessionFlow(compactingDefinition(4), "StorageKeepFour");
  const { environment, sessions } = await startStepwiseTestAgent(t, [keepAll, keepFour]);

  const keptTurns = await runUntilSecondSummary(sessions, "all");
  const [allIndex] = await environment.client.getAttributes("all", keepAll.agentMessageIndex);
  assert.ok(allIndex !== undefined);
  assert.equal(allIndex.firstSequence, 1, "retainedMessageLimit null deleted nothing");
  assert.ok(allIndex.chunks.every((chunk) => chunk.lastSequence - chunk.firstSequence === 1), "every chunk holds 2 messages");
  assert.ok(2 * keptTurns - allIndex.windowFirstSequence + 1 <= 4, "the window holds at most 4 messages");
  assert.equal((await sessions.getAgentSnapshot("all")).messages.length, 2 * keptTurns);

  const fourSessions = new AgentSessionTestClient(environment.client, keepFour);
  const fourTurns = await runUntilSecondSummary(fourSessions, "four");
  const [fourIndex] = await environment.client.getAttributes("four", keepFour.agentMessageIndex);
  const [fourSummary] = await environment.client.getAttributes("four", keepFour.contextSummary);
  assert.ok(fourIndex !== undefined && fourSummary !== undefined);
  assert.ok(fourIndex.firstSequence > 1, "retainedMessageLimit 4 deleted the oldest summarized chunks");
  assert.ok(fourIndex.firstSequence - 1 <= fourSummary.lastSequence, "only summarized messages were deleted");
  assert.ok(2 * fourTurns - (fourIndex.firstSequence - 1) >= 4, "at least 4 messages stay after the deleted ones");

  assert.throws(() => createStepwiseAgentSessionFlow({ ...compactingDefinition(null), messageChunkSize: 0 }, "StorageBad"), /messageChunkSize 0 is invalid/);
});
