/**
 * A schedule of every 2 seconds with every Worker down for 10 seconds, on a
 * real SQLite file with Worker child processes killed with SIGKILL: nothing
 * runs while they are down, a returning Worker runs exactly one catch-up
 * turn for the missed runs, and after it every run is for a time after the
 * run before (on time again, never a backlog). Each run is one turn,
 * answered once. The Step history's Timer times and commit times say which
 * due time each run served.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, type StepHistoryEntry } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { KillableWorkerProcess } from "../../testing/killable-worker-process.ts";
import { PrivateEngine } from "../../testing/private-engine.ts";
import { AgentStepType } from "../step-types.ts";
import { cancelScheduledTurn, scheduleTurn } from "./schedule-turn.ts";
import { scheduledTurnFlow as flow } from "./test-fixtures/scheduled-turn-flows.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/scheduled-turn-worker-main.ts", import.meta.url));
const periodMs = 2000;
const outageMs = 10_000;

interface Run {
  /** The Timer time this run's wait was for. */
  dueMs: number;
  startedMs: number;
  finishedMs: number;
}

/**
 * The completed runs of the session's schedules, oldest first, each with the
 * due time of its wait. A wait whose Timer fired as its schedule was
 * cancelled ends its branch (`dead_end`) without queuing a message: no run.
 */
function runsOf(history: readonly StepHistoryEntry[]): Run[] {
  const dueByExecution = new Map<string, number>();
  for (const entry of history) {
    if (entry.stepType !== AgentStepType.AwaitScheduledTurn || entry.method !== "wait_until" || entry.status !== "completed") continue;
    const items = (entry.outcome as { items?: { kind: string; dueAt?: number }[] }).items ?? [];
    const due = items.find((item) => item.kind === "timer")?.dueAt;
    if (typeof due === "number") dueByExecution.set(entry.executionId, due);
  }
  return history
    .filter((entry) => entry.stepType === AgentStepType.AwaitScheduledTurn && entry.method === "execute" && entry.status === "completed")
    .filter((entry) => (entry.outcome as { kind?: string }).kind === "move")
    .map((entry) => {
      const dueMs = dueByExecution.get(entry.executionId);
      assert.ok(dueMs !== undefined, `run ${entry.executionId} has a wait with a Timer time: ${JSON.stringify(history.filter((other) => other.executionId === entry.executionId))}`);
      return { dueMs, startedMs: entry.startedAt.getTime(), finishedMs: entry.finishedAt.getTime() };
    })
    .sort((left, right) => left.finishedMs - right.finishedMs);
}

function snapshotOf(client: Client, sessionId: string): Promise<AgentSnapshot> {
  return client.invokeRPC(flow.getAgentSnapshot, sessionId, undefined);
}

async function runCount(client: Client, sessionId: string): Promise<number> {
  return (await snapshotOf(client, sessionId)).scheduledTurns?.[0]?.runCount ?? 0;
}

test("every 2 s with all Workers SIGKILLed for 10 s: exactly one catch-up turn, then on time again", { timeout: 300_000 }, async (t) => {
  const engine = await PrivateEngine.start();
  const workers: KillableWorkerProcess[] = [];
  t.after(async () => {
    for (const worker of workers) await worker.kill();
    await engine.stop();
  });
  const client = new Client({ store: engine.openStore() });
  const start = () => KillableWorkerProcess.start({ entryModulePath, engineAddress: engine.address });
  workers.push(await start(), await start());
  const sessionId = "outage";
  await client.start(flow, sessionId, {});
  await scheduleTurn(client, flow, sessionId, { every: "*/2 * * * * *" }, "tick", { scheduleId: "ticker" });
  await pollUntil(async () => ((await runCount(client, sessionId)) >= 2 ? true : undefined), { timeoutMs: 30_000, description: "two runs before the outage" });

  for (const worker of workers.splice(0)) await worker.kill();
  // SQLite's clock is this machine's: the store's times compare with Date.now().
  const killedMs = Date.now();
  const countAtKill = await runCount(client, sessionId);
  await sleep(outageMs);
  assert.equal(await runCount(client, sessionId), countAtKill, "nothing runs while no Worker runs");
  const restartedMs = Date.now();
  workers.push(await start());
  await pollUntil(async () => ((await runCount(client, sessionId)) >= countAtKill + 3 ? true : undefined), { timeoutMs: 60_000, description: "three runs after the outage" });

  const runs = runsOf(await client.getStepHistory(sessionId));
  assert.deepEqual(runs.filter((run) => run.finishedMs > killedMs && run.finishedMs < restartedMs), [], "no run committed during the outage");
  const lastBefore = runs.filter((run) => run.finishedMs <= killedMs).at(-1);
  assert.ok(lastBefore !== undefined);
  const after = runs.filter((run) => run.finishedMs >= restartedMs);
  const missed = Math.floor((restartedMs - lastBefore.dueMs) / periodMs) - 1;
  assert.ok(missed >= 4, `the outage missed ${missed} runs`);
  // Exactly one run served a time that passed during the outage: the catch-up.
  const catchUps = after.filter((run) => run.dueMs < restartedMs);
  assert.equal(catchUps.length, 1, `catch-up runs: ${JSON.stringify(catchUps)}`);
  assert.equal(after[0], catchUps[0], "the catch-up runs first");
  // Then on time: each later run is for a 2-second mark after the run before it started, never a backlog.
  for (const [index, run] of after.entries()) {
    assert.equal(run.dueMs % periodMs, 0, `run ${index} is for a 2-second mark`);
    const previous = index === 0 ? undefined : after[index - 1];
    if (previous !== undefined) assert.ok(run.dueMs > previous.startedMs, `run ${index} (due ${run.dueMs}) is for a time after run ${index - 1} started (${previous.startedMs})`);
  }

  // Every run queued one message, and each became one turn answered once.
  assert.equal(await cancelScheduledTurn(client, flow, sessionId, "ticker"), true);
  const total = runsOf(await client.getStepHistory(sessionId)).length;
  const finished = await pollUntil(async () => {
    const snapshot = await snapshotOf(client, sessionId);
    return snapshot.state?.activeTurnId === null && snapshot.queuedMessageCount === 0 ? snapshot : undefined;
  }, { timeoutMs: 60_000, description: "the queued runs to finish" });
  assert.equal(finished.messages.filter((message) => message.role === "user" && message.text === "tick").length, total);
  assert.equal(finished.messages.filter((message) => message.role === "assistant" && message.text === "ok: tick").length, total);
  assert.equal(finished.state?.turnCount, total);
});
