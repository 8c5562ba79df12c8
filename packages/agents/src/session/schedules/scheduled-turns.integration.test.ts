/**
 * Scheduled turns on a real SQLite file with an in-process Worker: a one-time
 * and a cron schedule queue their message and run a turn each, a cancelled
 * one leaves no wait behind, a run due while a turn runs is queued like a
 * message, the agent's own `schedule_turn` call stores a schedule that runs,
 * and the HTTP routes answer bad input with a 400 that names it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { startHttpHarness } from "../../http/test-fixtures/http-harness.ts";
import { startSessionHarness, waitForTurns, type SessionHarness } from "../test-fixtures/session-harness.ts";
import { AgentStepType } from "../step-types.ts";
import { scheduledTurnTimerId } from "./await-scheduled-turn.ts";
import { cancelScheduledTurn, scheduleTurn } from "./schedule-turn.ts";
import { heldToolStarted, releaseHeldTool, scheduledTurnFlow } from "./test-fixtures/scheduled-turn-flows.ts";

const flow = scheduledTurnFlow;

function snapshotOf(harness: SessionHarness, sessionId: string): Promise<AgentSnapshot> {
  return harness.client.invokeRPC(flow.getAgentSnapshot, sessionId, undefined);
}

function userTexts(snapshot: AgentSnapshot): string[] {
  return snapshot.messages.filter((message) => message.role === "user").map((message) => message.text);
}

async function scheduleWaits(harness: SessionHarness, sessionId: string): Promise<number> {
  const description = await harness.client.describe(sessionId);
  return description.executions.filter((execution) => execution.stepType === AgentStepType.AwaitScheduledTurn).length;
}

test("a one-time and a cron schedule each run turns; cancelling ends the wait; the snapshot lists what is left", { timeout: 300_000 }, async (t) => {
  const harness = await startSessionHarness([flow]);
  t.after(() => harness.dispose());
  const sessionId = "scheduled-1";
  await harness.client.start(flow, sessionId, {});
  const once = await scheduleTurn(harness.client, flow, sessionId, { at: new Date(Date.now() + 500) }, "ping");
  assert.equal(once.scheduleId, "schedule-1");
  const ticker = await scheduleTurn(harness.client, flow, sessionId, { every: "* * * * * *" }, "tick", { scheduleId: "ticker" });
  assert.equal(ticker.every, "* * * * * *");
  // The same call again (a retry) adds nothing.
  assert.deepEqual(await scheduleTurn(harness.client, flow, sessionId, { every: "* * * * * *" }, "tick", { scheduleId: "ticker" }), ticker);
  assert.deepEqual((await snapshotOf(harness, sessionId)).scheduledTurns?.map((schedule) => schedule.scheduleId), ["schedule-1", "ticker"]);

  await pollUntil(async () => {
    const texts = userTexts(await snapshotOf(harness, sessionId));
    return texts.includes("ping") && texts.filter((text) => text === "tick").length >= 2 ? texts : undefined;
  }, { timeoutMs: 30_000, description: "the one-time run and two cron runs" });
  // The one-time schedule is gone once it ran; the cron one counts its runs.
  const running = await snapshotOf(harness, sessionId);
  const listed = running.scheduledTurns ?? [];
  assert.deepEqual(listed.map((schedule) => schedule.scheduleId), ["ticker"]);
  assert.ok((listed[0]?.runCount ?? 0) >= 2);
  assert.equal(await scheduleWaits(harness, sessionId), 1);

  assert.equal(await cancelScheduledTurn(harness.client, flow, sessionId, "ticker"), true);
  assert.equal(await cancelScheduledTurn(harness.client, flow, sessionId, "ticker"), false, "cancelled already");
  assert.deepEqual((await snapshotOf(harness, sessionId)).scheduledTurns, []);
  assert.equal(await scheduleWaits(harness, sessionId), 0, "no wait is left behind");
  // Each queued run became its own turn, answered once.
  const finished = await pollUntil(async () => {
    const snapshot = await snapshotOf(harness, sessionId);
    return snapshot.state?.activeTurnId === null && snapshot.queuedMessageCount === 0 ? snapshot : undefined;
  }, { timeoutMs: 30_000, description: "the queued runs to finish" });
  const ticks = userTexts(finished).filter((text) => text === "tick").length;
  assert.equal(finished.messages.filter((message) => message.role === "assistant" && message.text === "ok: tick").length, ticks);
});

test("a run due while a turn runs is queued like a message and starts the next turn", { timeout: 300_000 }, async (t) => {
  const harness = await startSessionHarness([flow]);
  t.after(() => {
    releaseHeldTool();
    return harness.dispose();
  });
  const sessionId = "scheduled-busy";
  await harness.client.start(flow, sessionId, { initial_message: "hold" });
  await heldToolStarted();
  const later = await scheduleTurn(harness.client, flow, sessionId, { at: Date.now() + 3_600_000 }, "while busy");
  // The wait exists once a Worker asked AwaitScheduledTurn for its Timer.
  await pollUntil(async () => ((await harness.client.skipTimer(sessionId, scheduledTurnTimerId(later.scheduleId))) === 1 ? true : undefined), { timeoutMs: 15_000, description: "the schedule's Timer" });
  const queued = await pollUntil(async () => {
    const snapshot = await snapshotOf(harness, sessionId);
    return snapshot.queuedMessages.length > 0 ? snapshot : undefined;
  }, { timeoutMs: 15_000, description: "the scheduled message in the queue" });
  assert.equal(queued.state?.activeTurnId, "turn-1", "the held turn still runs");
  assert.deepEqual(queued.queuedMessages.map((message) => [message.text, message.clientMessageId]), [["while busy", "schedule-1-run-1"]]);
  releaseHeldTool();
  await waitForTurns(harness, sessionId, 2);
  const after = await snapshotOf(harness, sessionId);
  assert.deepEqual(userTexts(after), ["hold", "while busy"]);
  assert.equal(after.messages.at(-1)?.text, "ok: while busy");
});

test("the agent schedules its own follow-up with the schedule_turn tool; the follow-up turn runs", { timeout: 300_000 }, async (t) => {
  const harness = await startSessionHarness([flow]);
  t.after(() => harness.dispose());
  const sessionId = "scheduled-by-agent";
  await harness.client.start(flow, sessionId, { initial_message: "follow up" });
  await waitForTurns(harness, sessionId, 1);
  const first = await snapshotOf(harness, sessionId);
  const [schedule] = first.scheduledTurns ?? [];
  assert.equal(schedule?.createdBy, "agent");
  assert.equal(schedule?.text, "check the delivery");
  assert.match(first.messages.at(-1)?.text ?? "", /^done: \{"status":"scheduled","schedule_id":"schedule-1","next_run_at":"[^"]+","every":null\}$/);
  await waitForTurns(harness, sessionId, 2);
  const second = await snapshotOf(harness, sessionId);
  assert.deepEqual(userTexts(second), ["follow up", "check the delivery"]);
  assert.deepEqual(second.scheduledTurns, []);
});

test("the HTTP routes schedule and cancel, and answer bad input with a 400 naming it", { timeout: 300_000 }, async (t) => {
  const harness = await startHttpHarness("plain");
  t.after(() => harness.close());
  const created = await harness.call("POST", "/api/sessions", { user: "alice", body: { sessionId: "http-scheduled" } });
  assert.equal(created.status, 201);
  const bad = [
    [{ text: "x" }, /exactly one of at .* and every/],
    [{ text: "x", every: "every morning" }, /every "every morning" in time zone "UTC" is not a cron expression/],
    [{ text: "x", at: "2001-01-01T00:00:00Z" }, /more than 5 minutes before the store's time/],
    [{ text: "x", every: "0 9 * * *", timezone: "Nowhere/City" }, /timezone "Nowhere\/City" is not an IANA time zone/],
  ] as const;
  for (const [body, message] of bad) {
    const response = await harness.call("POST", "/api/sessions/http-scheduled/schedules", { user: "alice", body });
    const text = await response.text();
    assert.equal(response.status, 400, text);
    assert.match((JSON.parse(text) as { error: string }).error, message);
  }
  const scheduled = await harness.call("POST", "/api/sessions/http-scheduled/schedules", { user: "alice", body: { text: "morning report", every: "0 9 * * 1-5", timezone: "Europe/Paris", scheduleId: "mornings" } });
  assert.equal(scheduled.status, 200);
  const { schedule } = (await scheduled.json()) as { schedule: Record<string, unknown> };
  assert.equal(schedule["schedule_id"], "mornings");
  assert.match(String(schedule["next_run_at"]), /T0[78]:00:00\.000Z$/);
  // Another principal cannot see the session, so neither its schedules.
  assert.equal((await harness.call("POST", "/api/sessions/http-scheduled/schedules", { user: "bob", body: { text: "x", every: "* * * * *" } })).status, 404);
  const snapshot = (await (await harness.call("GET", "/api/sessions/http-scheduled/snapshot", { user: "alice" })).json()) as { scheduled_turns?: { schedule_id: string }[] };
  assert.deepEqual(snapshot.scheduled_turns?.map((entry) => entry.schedule_id), ["mornings"]);
  const cancelled = await harness.call("POST", "/api/sessions/http-scheduled/schedules/mornings/cancel", { user: "alice", body: {} });
  assert.deepEqual(await cancelled.json(), { cancelled: true });
  assert.equal((await harness.call("POST", "/api/sessions/http-scheduled/schedules/bad%20id/cancel", { user: "alice", body: {} })).status, 400);
  const after = (await (await harness.call("GET", "/api/sessions/http-scheduled/snapshot", { user: "alice" })).json()) as Record<string, unknown>;
  assert.equal("scheduled_turns" in after, false, "a session without schedules keeps the contract's snapshot shape");
});
