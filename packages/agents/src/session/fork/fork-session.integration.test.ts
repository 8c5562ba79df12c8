import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Client, Worker, type Store } from "@perdure/engine";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, pollUntil, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "@perdure/engine/testing";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { forkSession } from "./fork-session.ts";
import { createNoteTakingAgentFlow, createNoteTakingModel, noteToolRuns } from "./test-fixtures/note-taking-agent.ts";
import { readEverySessionAttribute } from "./test-fixtures/session-attributes.ts";

const turns = 10;

async function waitForIdle(client: Client, flow: AgentSessionFlow, sessionId: string, turnCount: number): Promise<void> {
  await pollUntil(async () => {
    const [state] = await client.getAttributes(sessionId, flow.agentState);
    return state !== undefined && state.turnCount >= turnCount && state.activeTurnId === null;
  }, { timeoutMs: 30_000, description: `${sessionId} to finish ${turnCount} turns` });
}

/** Every stored message of a session, window and chunks, in sequence order. */
async function storedMessages(client: Client, flow: AgentSessionFlow, sessionId: string): Promise<AgentMessage[]> {
  return client.readFlowState(sessionId, async (reader) => {
    const window = (await reader.list(flow.agentMessages)).map((entry) => entry.value);
    const chunked = (await reader.list(flow.agentMessageChunks)).flatMap((entry) => entry.value.messages);
    return [...chunked, ...window].sort((left, right) => left.sequence - right.sequence);
  });
}

async function modelCallsOfTurn(client: Client, flow: AgentSessionFlow, sessionId: string, turnNumber: number) {
  const key = String(turnNumber).padStart(12, "0");
  return client.readFlowState(sessionId, (reader) => reader.list(flow.modelCalls, { fromKey: `${key}-`, toKey: `${key}.` }));
}

async function forkAtEveryBoundary(openStore: () => Promise<Store>): Promise<void> {
  const store = await openStore();
  const model = createNoteTakingModel();
  const flow = createNoteTakingAgentFlow(model);
  const worker = new Worker({ store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  const client = new Client({ store });
  try {
    await client.start(flow, "source", {});
    for (let turn = 1; turn <= turns; turn += 1) {
      await client.invokeRPC(flow.sendUserMessage, "source", { text: `note ${turn}` });
      await waitForIdle(client, flow, "source", turn);
      // Settings change half way, so a fork must take the settings of its boundary, not the latest.
      if (turn === 5) assert.equal(await client.invokeRPC(flow.updateSessionSettings, "source", { sessionSettings: { tone: "brief" } }), true);
    }
    const sourceBefore = await readEverySessionAttribute(client, flow, "source");
    const sourceMessages = await storedMessages(client, flow, "source");
    assert.ok(((sourceBefore["AgentMessageChunks"] as unknown[]) ?? []).length > 0, "the source rolled messages into chunks");

    for (let throughTurn = 0; throughTurn <= turns; throughTurn += 1) {
      const runsBefore = noteToolRuns.length;
      const modelCallsBefore = model.requests.length;
      const forkId = `fork-${throughTurn}`;
      const { lineage, created } = await forkSession(client, flow, { sourceSessionId: "source", throughTurn, sessionId: forkId });
      assert.equal(created, true);
      await pollUntil(async () => (await client.describe(forkId)).executions.some((execution) => execution.stepType === "AwaitUserMessage"), {
        timeoutMs: 30_000, description: `${forkId} to wait for a message`,
      });
      assert.equal(noteToolRuns.length, runsBefore, `no tool ran while ${forkId} was made`);
      assert.equal(model.requests.length, modelCallsBefore, `no model call was made while ${forkId} was made`);

      const [state, settings, lineageStored, pending] = await client.getAttributes(forkId, flow.agentState, flow.sessionSettings, flow.sessionLineage, flow.pendingInterrupts);
      assert.equal(state?.turnCount, throughTurn);
      assert.equal(state?.activeTurnId, null);
      assert.deepEqual(lineageStored, lineage);
      assert.equal(lineage.sourceSessionId, "source");
      assert.deepEqual(pending, []);
      assert.deepEqual(settings, throughTurn >= 5 ? { tone: "brief" } : undefined, `${forkId} has the settings of its boundary`);
      const forkMessages = await storedMessages(client, flow, forkId);
      const firstOfNextTurn = sourceMessages.find((message) => message.turnId === `turn-${throughTurn + 1}`)?.sequence ?? sourceMessages.length + 1;
      assert.equal(lineage.inheritedMessageCount, firstOfNextTurn - 1);
      assert.deepEqual(forkMessages, sourceMessages.slice(0, firstOfNextTurn - 1), `${forkId} holds the source's transcript through turn-${throughTurn}`);
      const inherited = await client.readFlowState(forkId, (reader) => reader.list(flow.turnToolCalls));
      assert.equal(inherited.length, throughTurn);
      assert.ok(inherited.every((entry) => entry.value.inheritedFrom === "source" && entry.value.toolCalls.every((call) => call.effect !== undefined)));

      // The fork's next turn, given the source's next message, sends the model exactly what the source's did.
      await client.invokeRPC(flow.sendUserMessage, forkId, { text: `note ${throughTurn + 1}` });
      await waitForIdle(client, flow, forkId, throughTurn + 1);
      const [forkFirstCall] = await modelCallsOfTurn(client, flow, forkId, throughTurn + 1);
      assert.ok(forkFirstCall !== undefined, `${forkId} recorded its model call`);
      if (throughTurn < turns) {
        const [sourceFirstCall] = await modelCallsOfTurn(client, flow, "source", throughTurn + 1);
        assert.deepEqual(forkFirstCall.value.request, sourceFirstCall?.value.request, `${forkId}'s next turn sees the source's transcript to turn-${throughTurn}`);
      } else {
        const input = (forkFirstCall.value.request as { input: unknown[] }).input;
        assert.equal(input.length, sourceMessages.length + 1);
      }
    }
    assert.deepEqual(await readEverySessionAttribute(client, flow, "source"), sourceBefore, "forking never changed the source");

    // A retried fork is the same fork; a fork of a fork inherits the records of the first source.
    assert.equal((await forkSession(client, flow, { sourceSessionId: "source", throughTurn: 3, sessionId: "fork-3" })).created, false);
    const second = await forkSession(client, flow, { sourceSessionId: "fork-3", throughTurn: 2 });
    const secondRecords = await client.readFlowState(second.sessionId, (reader) => reader.list(flow.turnToolCalls));
    assert.deepEqual(secondRecords.map((entry) => entry.value.inheritedFrom), ["source", "source"]);
  } finally {
    await worker.close();
  }
}

describe("forkSession", () => {
  it("forks a 10-turn session with writes at every turn boundary on SQLite: no tool runs, the next turn sees the source's transcript, the source is unchanged", async () => {
    const temporary = createTemporarySqliteStore();
    after(() => temporary.dispose());
    await forkAtEveryBoundary(async () => temporary.store);
  });

  it("forks at every turn boundary on PostgreSQL", { skip: postgresTestSkip(testDatabaseUrl()) }, async () => {
    const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
    after(() => temporary.dispose());
    await forkAtEveryBoundary(() => temporary.open());
  });

  it("refuses a bad fork with a clear error and creates nothing", async () => {
    const temporary = createTemporarySqliteStore();
    const flow = createNoteTakingAgentFlow(createNoteTakingModel());
    const worker = new Worker({ store: temporary.store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
    await worker.start();
    after(async () => {
      await worker.close();
      await temporary.dispose();
    });
    const client = new Client({ store: temporary.store });
    await client.start(flow, "one-turn", { initial_message: "note 1" });
    await waitForIdle(client, flow, "one-turn", 1);
    await assert.rejects(forkSession(client, flow, { sourceSessionId: "one-turn", throughTurn: 2, sessionId: "bad" }), /throughTurn 2 is invalid for session one-turn: use an integer from 0 to 1/);
    await assert.rejects(forkSession(client, flow, { sourceSessionId: "one-turn", throughTurn: -1, sessionId: "bad" }), /throughTurn -1 is invalid/);
    await assert.rejects(forkSession(client, flow, { sourceSessionId: "missing", throughTurn: 0, sessionId: "bad" }), /no Flow has ID "missing"/);
    await assert.rejects(client.describe("bad"), /no Flow has ID "bad"/);
    // Edit and resend: the fork starts its turn with the new text in its own commit.
    const edited = await forkSession(client, flow, { sourceSessionId: "one-turn", throughTurn: 0, initialMessage: "note 7" });
    await waitForIdle(client, flow, edited.sessionId, 1);
    const [message] = await client.getAttributes(edited.sessionId, flow.agentMessages.instance("000000000001"));
    assert.equal(message?.text, "note 7");
  });
});
