/**
 * A schedule set by a Worker whose wall clock is 10 minutes slow or fast, on
 * a real PostgreSQL server: the agent's `schedule_turn` call (2 seconds on)
 * runs in that Worker, and the schedule must be 2 seconds after the store's
 * time it was set (the time the event finishing the call was written, which
 * the store stamps), and its turn must run while the test watches, after
 * that time on the store's clock. Reading the Worker's clock would put it 10
 * minutes early (running at once) or late (never within the test).
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@perdure/engine";
import { createTemporaryPostgresSchema, pollUntil, postgresTestSkip, requireTestDatabaseUrl, startWorkerProcess, testDatabaseUrl } from "@perdure/engine/testing";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { AgentStepType } from "../step-types.ts";
import { followUpSeconds, scheduledTurnFlow as flow } from "./test-fixtures/scheduled-turn-flows.ts";

const url = testDatabaseUrl();
const entryModulePath = fileURLToPath(new URL("./test-fixtures/scheduled-turn-skew-worker-main.ts", import.meta.url));
const tenMinutesMs = 10 * 60_000;
/** Far below the skew. */
const toleranceMs = 30_000;

async function runWithSkewedWorker(t: TestContext, skewMs: number): Promise<void> {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const store = await temporary.open();
  const client = new Client({ store });
  const worker = await startWorkerProcess({ entryModulePath, env: { PERDURE_PG_SCHEMA: temporary.schema }, wallClockSkewMs: skewMs });
  t.after(async () => {
    await worker.kill();
    await temporary.dispose();
  });
  const reported = await pollUntil(() => /Date\.now\(\) - real = (-?\d+) ms/.exec(worker.output())?.[1], { description: "the Worker's clock report" });
  assert.ok(Math.abs(Number(reported) - skewMs) < 1000, `the Worker reports a skew of ${reported} ms, expected ${skewMs}`);

  const sessionId = "skewed-follow-up";
  await client.start(flow, sessionId, { initial_message: "follow up" });
  const finished = await pollUntil(async () => {
    const read = await client.readStream(sessionId, flow.agentEvents, { limit: 1000 });
    return read.messages.find((message) => message.value.type === "tool_call_finished");
  }, { timeoutMs: 60_000, description: "the schedule_turn call to finish" });
  // The schedule's wait is for its next run, read from its Step history so it holds even once the run happened.
  const wait = await pollUntil(async () => (await client.getStepHistory(sessionId)).find((entry) => entry.stepType === AgentStepType.AwaitScheduledTurn && entry.method === "wait_until" && entry.status === "completed"), { timeoutMs: 60_000, description: "the schedule's wait" });
  const dueMs = ((wait.outcome as { items?: { kind: string; dueAt?: number }[] }).items ?? []).find((item) => item.kind === "timer")?.dueAt;
  assert.ok(typeof dueMs === "number", JSON.stringify(wait.outcome));
  const offByMs = dueMs - (finished.writtenAt.getTime() + followUpSeconds * 1000);
  assert.ok(Math.abs(offByMs) < toleranceMs, `the schedule's next run ${new Date(dueMs).toISOString()} is ${Math.round(offByMs / 1000)} s off the store's time it was set (${finished.writtenAt.toISOString()}) plus ${followUpSeconds} s`);
  // The follow-up turn runs while the test watches, and not before its time on the store's clock.
  const state = await pollUntil(async () => {
    const [current] = await client.getAttributes(sessionId, flow.agentState);
    return current !== undefined && current.turnCount >= 2 && current.activeTurnId === null ? current : undefined;
  }, { timeoutMs: 60_000, description: "the scheduled follow-up turn" });
  assert.equal(state.turnCount, 2);
  const run = (await client.getStepHistory(sessionId)).find((entry) => entry.stepType === AgentStepType.AwaitScheduledTurn && entry.method === "execute" && entry.status === "completed");
  assert.ok(run !== undefined, "the schedule ran");
  const earlyByMs = finished.writtenAt.getTime() + followUpSeconds * 1000 - run.startedAt.getTime();
  assert.ok(earlyByMs <= 100, `the schedule ran ${earlyByMs} ms before its time on the store's clock`);
  const after: AgentSnapshot = await client.invokeRPC(flow.getAgentSnapshot, sessionId, undefined);
  assert.deepEqual(after.messages.filter((message) => message.role === "user").map((message) => message.text), ["follow up", "check the delivery"]);
  assert.equal(worker.output().includes("Error"), false, worker.output());
}

for (const skewMs of [-tenMinutesMs, tenMinutesMs]) {
  void test(`a schedule the agent sets in a Worker whose clock is 10 minutes ${skewMs < 0 ? "slow" : "fast"} runs on PostgreSQL's clock`, {
    timeout: 120_000,
    skip: postgresTestSkip(url),
  }, async (t) => runWithSkewedWorker(t, skewMs));
}
