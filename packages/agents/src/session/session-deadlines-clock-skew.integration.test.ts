/**
 * Every session deadline is set on the store's clock, never the Worker's
 * wall clock: a real Worker child process whose `Date` is 10 minutes slow or
 * fast runs a `durable_wait`, approvals and questions with deadlines (answered
 * in time, and left to expire), and a tool task that polls and asks, against
 * a real PostgreSQL server, whose clock Timers fire on. Each stored deadline
 * must be its duration after the store's time it was set (the time the event
 * announcing it was written, which the store stamps); the answers the test
 * process gives within the deadline must be taken, and the deadlines left
 * alone must pass while the test watches.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, type StreamMessage } from "@perdure/engine";
import { createTemporaryPostgresSchema, pollUntil, postgresTestSkip, requireTestDatabaseUrl, startWorkerProcess, testDatabaseUrl } from "@perdure/engine/testing";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import type { AgentEvent, AgentEventType } from "../contract/values/agent-event.ts";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import { approvalDeadlinePassed, questionDeadlinePassed } from "../contract/values/result-texts.ts";
import type { AgentSessionFlow } from "./create-agent-session-flow.ts";
import { longDeadlineFlow, longDeadlineMs, shortDeadlineFlow, shortDeadlineMs, skewWaitSeconds } from "./test-fixtures/clock-skew-session-flows.ts";

const url = testDatabaseUrl();
const entryModulePath = fileURLToPath(new URL("./test-fixtures/clock-skew-worker-main.ts", import.meta.url));
const tenMinutesMs = 10 * 60_000;
/** How far a stored deadline may sit from the store's time it was set plus its duration: far below the skew. */
const toleranceMs = 30_000;
/** Bounds the waits for deadlines of seconds; the bug made them 10 minutes long. */
const turnTimeoutMs = 60_000;

/** The session's first event of `type`, with the store's time it was written. */
async function eventOf(client: Client, flow: AgentSessionFlow, sessionId: string, type: AgentEventType): Promise<StreamMessage<AgentEvent>> {
  return pollUntil(async () => {
    const read = await client.readStream(sessionId, flow.agentEvents, { limit: 1000 });
    return read.messages.find((message) => message.value.type === type);
  }, { timeoutMs: turnTimeoutMs, description: `${type} in session ${sessionId}` });
}

/** Asserts `stored` (ISO 8601) is `durationMs` after `setAt` on the store's clock, within the tolerance. */
function assertDeadline(stored: string | null | undefined, setAt: Date, durationMs: number, what: string): void {
  assert.ok(typeof stored === "string", `${what} has no deadline`);
  const offByMs = Date.parse(stored) - (setAt.getTime() + durationMs);
  assert.ok(Math.abs(offByMs) < toleranceMs, `${what} is ${stored}, ${Math.round(offByMs / 1000)} s off the store's time it was set (${setAt.toISOString()}) plus ${durationMs} ms`);
}

/** The one pending interrupt of the session, with the event that raised it. */
async function pendingInterrupt(client: Client, sessions: AgentSessionTestClient, sessionId: string): Promise<{ interrupt: AgentInterrupt; raisedAt: Date }> {
  const [interrupt] = await sessions.waitForPendingInterrupts(sessionId, 1, { timeoutMs: turnTimeoutMs });
  assert.ok(interrupt !== undefined);
  const raised = await eventOf(client, sessions.flow, sessionId, "interrupt_raised");
  return { interrupt, raisedAt: raised.writtenAt };
}

async function lastMessageOfFirstTurn(sessions: AgentSessionTestClient, sessionId: string): Promise<string> {
  await sessions.waitForTurnCount(sessionId, 1, { timeoutMs: turnTimeoutMs });
  return (await sessions.getAgentSnapshot(sessionId)).messages.at(-1)?.text ?? "";
}

async function runWithSkewedWorker(t: TestContext, skewMs: number): Promise<void> {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const store = await temporary.open();
  const client = new Client({ store });
  const worker = await startWorkerProcess({
    entryModulePath,
    env: { PERDURE_PG_SCHEMA: temporary.schema },
    wallClockSkewMs: skewMs,
  });
  t.after(async () => {
    await worker.kill();
    await temporary.dispose();
  });
  // The preload took: the Worker's wall clock is off by the skew.
  const reported = await pollUntil(() => /Date\.now\(\) - real = (-?\d+) ms/.exec(worker.output())?.[1], { description: "the Worker's clock report" });
  assert.ok(Math.abs(Number(reported) - skewMs) < 1000, `the Worker reports a skew of ${reported} ms, expected ${skewMs}`);

  const long = new AgentSessionTestClient(client, longDeadlineFlow);
  const short = new AgentSessionTestClient(client, shortDeadlineFlow);
  // Session IDs name the request; the short-deadline ones start with "late-".
  for (const request of ["wait", "refund", "ask", "task"]) await long.start(request, { initialMessage: request });
  for (const request of ["refund", "ask"]) await short.start(`late-${request}`, { initialMessage: request });

  await t.test("durable_wait: waits its duration on the store's clock", async () => {
    const started = await eventOf(client, longDeadlineFlow, "wait", "timer_started");
    const waitUntil = (started.value.payload as { wait_until?: string }).wait_until;
    assertDeadline(waitUntil, started.writtenAt, skewWaitSeconds * 1000, "the wait's wait_until");
    assert.match(await lastMessageOfFirstTurn(long, "wait"), /^wait: \{"status":"completed","waited_seconds":3,"reason":"skew"\}$/);
    const fired = (await client.getStepHistory("wait")).find((entry) => entry.stepType === "AwaitTimer" && entry.method === "execute");
    assert.ok(fired !== undefined && fired.startedAt.getTime() >= Date.parse(waitUntil ?? "") - 100, "the wait ended before its wait_until on the store's clock");
  });

  await t.test("an approval answered within its deadline is taken", async () => {
    const { interrupt, raisedAt } = await pendingInterrupt(client, long, "refund");
    assertDeadline(interrupt.deadline, raisedAt, longDeadlineMs, "the approval's deadline");
    assert.equal(await long.resolveInterrupt("refund", { interruptId: interrupt.interruptId, approved: true, rejectionMessage: null }), true, "the approval was refused as past its deadline");
    assert.equal(await lastMessageOfFirstTurn(long, "refund"), "refund: refunded 7");
  });

  await t.test("an ask_user question answered within its deadline is taken", async () => {
    const { interrupt, raisedAt } = await pendingInterrupt(client, long, "ask");
    assertDeadline(interrupt.deadline, raisedAt, longDeadlineMs, "the question's deadline");
    assert.equal(await long.answerQuestion("ask", { interruptId: interrupt.interruptId, answer: "Order 7" }), true, "the answer was refused as past its deadline");
    assert.equal(await lastMessageOfFirstTurn(long, "ask"), 'ask: {"status":"answered","answer":"Order 7"}');
  });

  await t.test("a tool task polls on its intervals, and its question's deadline is on the store's clock", async () => {
    const { interrupt, raisedAt } = await pendingInterrupt(client, long, "task");
    assert.equal(interrupt.question, "Which format?");
    assertDeadline(interrupt.deadline, raisedAt, longDeadlineMs, "the task question's deadline");
    assert.equal(await long.answerQuestion("task", { interruptId: interrupt.interruptId, answer: "PDF" }), true, "the answer was refused as past its deadline");
    assert.equal(await lastMessageOfFirstTurn(long, "task"), "task: report (answered: PDF)");
    const polls = (await client.getStepHistory("task")).filter((entry) => entry.stepType === "PollToolTask" && entry.method === "execute");
    assert.equal(polls.length, 3, "pending, the question, the report");
  });

  await t.test("an approval nobody answers is rejected once its deadline passes", async () => {
    // It may have passed already, so the deadline is read from the event that raised it.
    const raised = await eventOf(client, shortDeadlineFlow, "late-refund", "interrupt_raised");
    assertDeadline((raised.value.payload as { deadline?: string }).deadline, raised.writtenAt, shortDeadlineMs, "the approval's deadline");
    assert.match(await lastMessageOfFirstTurn(short, "late-refund"), new RegExp(approvalDeadlinePassed));
  });

  await t.test("a question nobody answers gets its deadline result once the deadline passes", async () => {
    // It may have passed already, so the deadline is read from the event that raised it.
    const raised = await eventOf(client, shortDeadlineFlow, "late-ask", "interrupt_raised");
    assertDeadline((raised.value.payload as { deadline?: string }).deadline, raised.writtenAt, shortDeadlineMs, "the question's deadline");
    assert.match(await lastMessageOfFirstTurn(short, "late-ask"), new RegExp(questionDeadlinePassed));
  });
  assert.equal(await worker.stop(), 0);
}

for (const skewMs of [-tenMinutesMs, tenMinutesMs]) {
  void test(`a Worker whose wall clock is 10 minutes ${skewMs < 0 ? "slow" : "fast"} sets every session deadline on PostgreSQL's clock: durable_wait, approvals, questions and tool task polls`, {
    timeout: 240_000,
    skip: postgresTestSkip(url),
  }, async (t) => runWithSkewedWorker(t, skewMs));
}
