import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { exportSession } from "../../session/export/export-session.ts";
import type { SessionFixture } from "../../session/export/session-fixture.ts";
import { createNoteTakingAgentFlow, createNoteTakingModel, noteToolRuns } from "../../session/fork/test-fixtures/note-taking-agent.ts";
import { replaySession } from "./replay-session.ts";

const recordedTurns = 4;
let fixture: SessionFixture;

before(async () => {
  const temporary = createTemporarySqliteStore();
  const flow = createNoteTakingAgentFlow(createNoteTakingModel());
  const worker = new Worker({ store: temporary.store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    await client.start(flow, "recorded", { session_settings: { tone: "plain" } });
    for (let turn = 1; turn <= recordedTurns; turn += 1) {
      await client.invokeRPC(flow.sendUserMessage, "recorded", { text: `note ${turn}` });
      await pollUntil(async () => {
        const [state] = await client.getAttributes("recorded", flow.agentState);
        return state?.turnCount === turn && state.activeTurnId === null;
      }, { timeoutMs: 30_000, description: `recorded turn ${turn}` });
    }
    // Through JSON, as a fixture file would carry it.
    fixture = JSON.parse(JSON.stringify(await exportSession(client, flow, "recorded"))) as SessionFixture;
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});

describe("replaySession", () => {
  it("an unchanged agent replays its own export with no divergence, running only its read tools", async () => {
    assert.equal(fixture.turns.length, recordedTurns);
    assert.deepEqual(fixture.turns[0]?.user_messages, ["note 1"]);
    assert.deepEqual(fixture.turns[0]?.session_settings, { tone: "plain" });
    assert.deepEqual(fixture.turns[2]?.tool_calls.map((call) => [call.tool_name, call.effect, call.status]), [["write_note", "non_idempotent_write", "succeeded"], ["read_notes", "read", "succeeded"]]);
    const runsBefore = noteToolRuns.length;
    const report = await replaySession(fixture, { flow: createNoteTakingAgentFlow(createNoteTakingModel()) });
    assert.equal(report.divergence, null, report.divergence?.diff);
    assert.equal(report.turns, recordedTurns);
    assert.equal(report.modelCalls, fixture.turns.reduce((sum, turn) => sum + turn.model_calls.length, 0));
    assert.deepEqual(report.toolCallsRun, ["read-3"]);
    assert.deepEqual(report.toolCallsFromRecording, ["write-1", "write-2", "write-3", "write-4"]);
    assert.deepEqual(noteToolRuns.slice(runsBefore).map((run) => run.tool), ["read_notes"], "no write tool ran in the replay");
  });

  it("a changed tool description diverges at the first model call, with a readable diff", async () => {
    const report = await replaySession(fixture, { flow: createNoteTakingAgentFlow(createNoteTakingModel(), { writeNoteDescription: "Write a note to the notebook." }) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.equal(report.divergence?.modelCall, 1);
    assert.equal(report.divergence?.step, "RunModel");
    assert.match(report.divergence?.diff ?? "", /turn-1, model call 1 \(RunModel\): the agent sent the model a different request\n {2}tools\[0\]\.description\n {4}recorded: "Write a note\."\n {4}now: {6}"Write a note to the notebook\."/);
    assert.equal(report.turns, 0);
  });

  it("a changed tool argument diverges at the model call that offers it", async () => {
    const report = await replaySession(fixture, { flow: createNoteTakingAgentFlow(createNoteTakingModel(), { textArgumentDescription: "What to write." }) });
    assert.equal(report.divergence?.kind, "model_request");
    assert.match(report.divergence?.diff ?? "", /tools\[0\]\.parameters\.properties\.text\.description\n {4}recorded: \(absent\)\n {4}now: {6}"What to write\."/);
  });

  it("a write tool that now claims to be read diverges at its CallTool and is not run", async () => {
    const runsBefore = noteToolRuns.length;
    const report = await replaySession(fixture, { flow: createNoteTakingAgentFlow(createNoteTakingModel(), { writeNoteEffect: "read" }) });
    assert.equal(report.divergence?.kind, "tool_call");
    assert.equal(report.divergence?.step, "CallTool");
    assert.equal(report.divergence?.turnId, "turn-1");
    assert.match(report.divergence?.diff ?? "", /effect\n {4}recorded: "non_idempotent_write"\n {4}now: {6}"read"/);
    assert.equal(noteToolRuns.length, runsBefore);
  });

  it("a turn that makes more model calls than recorded diverges at the extra call", async () => {
    const trimmed = structuredClone(fixture);
    trimmed.turns[1]?.model_calls.splice(1);
    const report = await replaySession(trimmed, { flow: createNoteTakingAgentFlow(createNoteTakingModel()) });
    assert.equal(report.divergence?.kind, "model_call_count");
    assert.equal(report.divergence?.turnId, "turn-2");
    assert.match(report.divergence?.diff ?? "", /turn-2: the agent made model call 2, but the recording has 1 model call in this turn/);
  });

  it("refuses what is not a fixture, naming the problem", async () => {
    const flow = createNoteTakingAgentFlow(createNoteTakingModel());
    await assert.rejects(replaySession({ format: "other" }, { flow }), /format "other" is not a session fixture's/);
    await assert.rejects(replaySession({ ...fixture, version: 9 }, { flow }), /session fixture version 9 is not one this release reads/);
    await assert.rejects(replaySession(fixture, { flow: {} as never }), /replaySession needs \{ flow \}/);
  });
});
