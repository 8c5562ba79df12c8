import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, it } from "node:test";
import { Client, Worker, type Store } from "@perdure/engine";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, pollUntil, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "@perdure/engine/testing";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import { createNoteTakingAgentFlow, createNoteTakingModel, noteToolRuns } from "./test-fixtures/note-taking-agent.ts";
import { readEverySessionAttribute } from "./test-fixtures/session-attributes.ts";

// The scenario: a scripted 10-turn session with writes, forked at random turn boundaries under SIGKILL.
const sourceTurns = 10;
const rounds = 3;
const forkLoopMain = fileURLToPath(new URL("./test-fixtures/fork-loop-main.ts", import.meta.url));

/** Runs the fork loop until it printed `forks` forks and a random moment more, then SIGKILLs it. */
async function killForkLoopMidway(storeSpec: string, prefix: string, forks: number): Promise<void> {
  const child = spawn(process.execPath, ["--conditions=perdure-source", forkLoopMain, storeSpec, prefix, String(sourceTurns)], { stdio: ["ignore", "pipe", "pipe"] });
  let printed = 0;
  let errors = "";
  child.stderr.on("data", (data: Buffer) => { errors += data.toString(); });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (data: Buffer) => {
      printed += data.toString().split("\n").filter((line) => line.startsWith("forked ")).length;
      if (printed >= forks) resolve();
    });
    void exited.then((end) => reject(new Error(`the fork loop ended by itself (${String(end)}): ${errors}`)));
  });
  // A random moment inside the next forks: mid-read, mid-commit or between two.
  await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 15)));
  child.kill("SIGKILL");
  assert.equal(await exited, "SIGKILL");
}

/** Forks killed mid-way on `store`, which the child processes open as `storeSpec`; then the checks. */
async function forkUnderKills(store: Store, storeSpec: string, dispose: () => Promise<void>): Promise<void> {
  const model = createNoteTakingModel();
  const flow = createNoteTakingAgentFlow(model);
  const client = new Client({ store });
  let worker = new Worker({ store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  after(async () => {
    await worker.close();
    await dispose();
  });
  await client.start(flow, "source", {});
  for (let turn = 1; turn <= sourceTurns; turn += 1) {
    await client.invokeRPC(flow.sendUserMessage, "source", { text: `note ${turn}` });
    await pollUntil(async () => (await client.getAttributes("source", flow.agentState))[0]?.turnCount === turn
      && (await client.getAttributes("source", flow.agentState))[0]?.activeTurnId === null, { timeoutMs: 30_000, description: `source turn ${turn}` });
  }
  // No Worker runs while forks are made and killed: the check reads the stores exactly as the kill left them.
  await worker.close();
  const sourceBefore = await readEverySessionAttribute(client, flow, "source");
  const runsBefore = noteToolRuns.length;
  for (let round = 0; round < rounds; round += 1) await killForkLoopMidway(storeSpec, `round-${round}`, 1 + Math.floor(Math.random() * 4));

  assert.deepEqual(await readEverySessionAttribute(client, flow, "source"), sourceBefore, "the source is unchanged");
  const forks = (await client.listFlows({ flowType: flow.flowType })).filter((entry) => entry.flowId !== "source");
  assert.ok(forks.length >= rounds, `at least one fork per round committed (${forks.length})`);
  const sourceMessages = ((sourceBefore["AgentMessageChunks"] as { value: { messages: AgentMessage[] } }[]).flatMap((entry) => entry.value.messages))
    .concat((sourceBefore["AgentMessages"] as { value: AgentMessage }[]).map((entry) => entry.value))
    .sort((left, right) => left.sequence - right.sequence);
  for (const { flowId } of forks) {
    const fork = await readEverySessionAttribute(client, flow, flowId);
    const lineage = fork["SessionLineage"] as { throughTurn: number; inheritedMessageCount: number };
    assert.ok(lineage !== undefined, `${flowId} has its lineage`);
    const state = fork["AgentState"] as { turnCount: number; messageCount: number };
    assert.equal(state.turnCount, lineage.throughTurn);
    assert.equal(state.messageCount, lineage.inheritedMessageCount);
    const messages = ((fork["AgentMessageChunks"] as { value: { messages: AgentMessage[] } }[]).flatMap((entry) => entry.value.messages))
      .concat((fork["AgentMessages"] as { value: AgentMessage }[]).map((entry) => entry.value))
      .sort((left, right) => left.sequence - right.sequence);
    assert.deepEqual(messages, sourceMessages.slice(0, state.messageCount), `${flowId} holds the source's first ${state.messageCount} messages, whole`);
    assert.equal((fork["TurnToolCalls"] as unknown[]).length, lineage.throughTurn);
  }

  // Every fork the kills left is usable: a Worker takes each to its first wait, and no tool runs.
  worker = new Worker({ store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  for (const { flowId } of forks) {
    await pollUntil(async () => (await client.describe(flowId)).executions.some((execution) => execution.stepType === "AwaitUserMessage"), {
      timeoutMs: 30_000, description: `${flowId} to wait for a message`,
    });
  }
  assert.equal(noteToolRuns.length, runsBefore, "no tool ran for any fork");

  // Each fork's next turn sees exactly the source's transcript to its boundary: its model request is the one the source sent in that turn.
  for (const { flowId } of forks) {
    const [lineage] = await client.getAttributes(flowId, flow.sessionLineage);
    const next = (lineage?.throughTurn ?? 0) + 1;
    if (next > sourceTurns) continue;
    await client.invokeRPC(flow.sendUserMessage, flowId, { text: `note ${next}` });
    await pollUntil(async () => {
      const [state] = await client.getAttributes(flowId, flow.agentState);
      return state?.turnCount === next && state.activeTurnId === null;
    }, { timeoutMs: 30_000, description: `${flowId}'s turn ${next}` });
    const [forkCall] = await firstModelCallOfTurn(client, flow, flowId, next);
    const [sourceCall] = await firstModelCallOfTurn(client, flow, "source", next);
    assert.ok(sourceCall !== undefined && forkCall !== undefined);
    assert.deepEqual(forkCall.value.request, sourceCall.value.request, `${flowId}'s turn ${next} sent the model what the source sent`);
  }
  assert.deepEqual(await readEverySessionAttribute(client, flow, "source"), sourceBefore, "the source is unchanged after its forks ran turns");
}

async function firstModelCallOfTurn(client: Client, flow: ReturnType<typeof createNoteTakingAgentFlow>, sessionId: string, turnNumber: number) {
  const key = String(turnNumber).padStart(12, "0");
  return client.readFlowState(sessionId, (reader) => reader.list(flow.modelCalls, { fromKey: `${key}-`, toKey: `${key}.`, limit: 1 }));
}

it("forking a 10-turn session in a process killed with SIGKILL leaves each fork whole or absent and the source unchanged; each fork's next turn sends the source's request (SQLite)", async () => {
  const temporary = createTemporarySqliteStore();
  await forkUnderKills(temporary.store, `sqlite:${temporary.path}`, () => temporary.dispose());
});

it("forking a 10-turn session in a process killed with SIGKILL leaves each fork whole or absent and the source unchanged; each fork's next turn sends the source's request (PostgreSQL)", { skip: postgresTestSkip(testDatabaseUrl()) }, async () => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  await forkUnderKills(await temporary.open(), `postgres:${temporary.schema}`, () => temporary.dispose());
});
