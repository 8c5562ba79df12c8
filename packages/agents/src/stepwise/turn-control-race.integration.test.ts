/**
 * The seeded turn-control race test: each seed is one session whose program,
 * drawn from the seed, interleaves send_user_message, steer_user_message (by
 * text and by queued ID), delete_queued_message, cancel_turn,
 * resolve_interrupt and answer_question with its turns' tool calls (a read,
 * an approved write, a single-attempt write, ask_user, durable_wait). The
 * sessions of a batch share one SQLite engine and a chain of Worker child
 * processes, each SIGKILLed at a durable boundary drawn from the batch's
 * first seed, then replaced. After each program the test checks: message
 * sequences are gapless, every tool call of every model response has one
 * final result, no single-attempt tool ran twice, every pending interrupt
 * belonged to the active turn, and the session takes a new message.
 *
 * `PERDURE_TURN_CONTROL_SEEDS` (default 100) and
 * `PERDURE_TURN_CONTROL_FIRST_SEED` (default 1) choose the seeds (`npm run
 * test:soak` runs seeds 101 to 1200);
 * `PERDURE_TURN_CONTROL_SEED=<n>` replays one seed alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ChannelMessageNotFoundError } from "@perdure/engine";
import { killAtBoundaryEnvironmentVariable } from "@perdure/engine/internal";
import { AgentSessionTestClient } from "../testing/agent-session-test-client.ts";
import { AgentTestEnvironment } from "../testing/agent-test-environment.ts";
import { KillableWorkerProcess } from "../testing/killable-worker-process.ts";
import { PrivateEngine } from "../testing/private-engine.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import {
  raceCallNames,
  turnControlRaceDirectoryEnvironmentVariable,
  turnControlRaceFlow,
  turnControlRaceLog,
} from "./test-fixtures/turn-control-race-flow.ts";

const entryModulePath = fileURLToPath(new URL("./test-fixtures/turn-control-race-worker-main.ts", import.meta.url));
const testFile = "packages/agents/src/stepwise/turn-control-race.integration.test.ts";

function positiveIntegerFromEnvironment(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name}=${JSON.stringify(text)} is invalid: use a positive integer`);
  return value;
}

/** mulberry32: a small deterministic generator, so a seed always draws the same program. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<TValue>(random: () => number, values: readonly TValue[]): TValue | undefined {
  return values.length === 0 ? undefined : values[Math.floor(random() * values.length)];
}

function randomCallsText(random: () => number): string {
  const count = Math.floor(random() * 4);
  const names = Array.from({ length: count }, () => pick(random, raceCallNames) ?? "lookup");
  return `calls:${names.join(",")}`;
}

const replaySeed = process.env.PERDURE_TURN_CONTROL_SEED;
const seeds = replaySeed !== undefined && replaySeed !== ""
  ? [positiveIntegerFromEnvironment("PERDURE_TURN_CONTROL_SEED", 1)]
  : Array.from({ length: positiveIntegerFromEnvironment("PERDURE_TURN_CONTROL_SEEDS", 100) }, (_, index) => positiveIntegerFromEnvironment("PERDURE_TURN_CONTROL_FIRST_SEED", 1) + index);
const batchSize = 50;
const maxKillsPerBatch = 3;

class SeedFailure extends Error {
  constructor(seed: number, cause: unknown) {
    super(`seed ${seed} failed: ${cause instanceof Error ? cause.message : String(cause)}\nreplay: PERDURE_TURN_CONTROL_SEED=${seed} node --conditions=perdure-source --test ${testFile}`, { cause });
  }
}

function checkPendingInterrupts(snapshot: AgentSnapshot): void {
  for (const interrupt of snapshot.pendingInterrupts) {
    assert.equal(interrupt.turnId, snapshot.state?.activeTurnId, `pending interrupt ${interrupt.interruptId} belongs to ${interrupt.turnId}, not the active turn ${String(snapshot.state?.activeTurnId)}`);
  }
}

/** One seed's program of RPCs, at random moments, while the Workers run and die. */
async function runProgram(sessions: AgentSessionTestClient, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const sessionId = `seed-${seed}`;
  await sessions.start(sessionId, { initialMessage: randomCallsText(random) });
  await sessions.waitForState(sessionId, () => true, { timeoutMs: 60_000 });
  for (let step = 0; step < 10; step += 1) {
    await delay(Math.floor(random() * 250));
    const snapshot = await sessions.getAgentSnapshot(sessionId);
    checkPendingInterrupts(snapshot);
    const operation = pick(random, ["send", "steer_text", "steer_queued", "delete", "cancel", "resolve", "answer"] as const);
    const approvals = snapshot.pendingInterrupts.filter((interrupt) => interrupt.kind === "approval");
    const questions = snapshot.pendingInterrupts.filter((interrupt) => interrupt.kind === "question");
    const queued = pick(random, snapshot.queuedMessages);
    try {
      if (operation === "send") await sessions.sendUserMessage(sessionId, randomCallsText(random));
      if (operation === "steer_text") await sessions.steerUserMessage(sessionId, { messageId: null, text: randomCallsText(random) });
      if (operation === "steer_queued" && queued !== undefined) await sessions.steerUserMessage(sessionId, { messageId: queued.messageId, text: null });
      if (operation === "delete" && queued !== undefined) await sessions.deleteQueuedMessage(sessionId, queued.messageId);
      if (operation === "cancel") await sessions.cancelTurn(sessionId, random() < 0.5 ? null : (snapshot.state?.activeTurnId ?? null), { timeoutMs: 30_000 });
      const approval = pick(random, approvals);
      if (operation === "resolve" && approval !== undefined) await sessions.resolveInterrupt(sessionId, { interruptId: approval.interruptId, approved: random() < 0.7 }, { timeoutMs: 30_000 });
      const question = pick(random, questions);
      if (operation === "answer" && question !== undefined) await sessions.answerQuestion(sessionId, { interruptId: question.interruptId, answer: "this one" }, { timeoutMs: 30_000 });
    } catch (error) {
      // The contract's answer when the session consumed the message while the RPC ran.
      if (!ChannelMessageNotFoundError.isInstance(error)) throw error;
    }
  }
}

/** Answers, approves and skips waits until the session is idle with nothing queued. */
async function drain(sessions: AgentSessionTestClient, seed: number): Promise<AgentSnapshot> {
  const sessionId = `seed-${seed}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    const snapshot = await sessions.getAgentSnapshot(sessionId);
    checkPendingInterrupts(snapshot);
    // Idle means only AwaitUserMessage waits: a message its wait already took is out of the Channel before its turn starts.
    const executions = (await sessions.client.describe(sessionId)).executions;
    const isIdle = snapshot.state?.activeTurnId === null && snapshot.queuedMessages.length === 0 && snapshot.steeredMessages.length === 0
      && executions.length === 1 && executions[0]?.stepType === "AwaitUserMessage" && executions[0].status === "waiting";
    if (isIdle) return snapshot;
    if (Date.now() > deadline) throw new Error(`session ${sessionId} is still busy: ${JSON.stringify({ state: snapshot.state, calls: snapshot.toolCalls.map((call) => [call.toolCallId, call.status]) })}`);
    for (const interrupt of snapshot.pendingInterrupts) {
      if (interrupt.kind === "approval") await sessions.resolveInterrupt(sessionId, { interruptId: interrupt.interruptId, approved: true }, { timeoutMs: 30_000 });
      else await sessions.answerQuestion(sessionId, { interruptId: interrupt.interruptId, answer: "drained" }, { timeoutMs: 30_000 });
    }
    for (const call of snapshot.toolCalls) if (call.status === "waiting_for_timer") await sessions.skipTimer(sessionId, call.toolCallId);
    await delay(100);
  }
}

interface RunEntry { flowId: string; toolCallId: string }

function checkSession(snapshot: AgentSnapshot, charges: readonly RunEntry[], seed: number): void {
  const { messages, state } = snapshot;
  assert.deepEqual(messages.map((message) => message.sequence), Array.from({ length: messages.length }, (_, index) => index + 1), "message sequences are gapless from 1");
  assert.equal(state?.messageCount, messages.length);
  assert.deepEqual(snapshot.toolCalls, [], "no tool call record outlives its turn");
  for (const message of messages) {
    const requested = (message.frameworkItem as { type?: string; tool_calls?: { id: string }[] } | null);
    if (requested?.type !== "model_output") continue;
    for (const call of requested.tool_calls ?? []) {
      const results = messages.filter((candidate) => candidate.role === "tool" && candidate.toolCallId === call.id);
      assert.equal(results.length, 1, `tool call ${call.id} has ${results.length} final results`);
    }
  }
  const runsByCall = new Map<string, number>();
  for (const entry of charges) if (entry.flowId === `seed-${seed}`) runsByCall.set(entry.toolCallId, (runsByCall.get(entry.toolCallId) ?? 0) + 1);
  for (const [toolCallId, runs] of runsByCall) assert.equal(runs, 1, `the single-attempt charge ${toolCallId} ran ${runs} times`);
}

/** What a failure report shows of a session: its state, records, and the Steps that have not finished. */
async function describeSession(sessions: AgentSessionTestClient, seed: number): Promise<string> {
  const sessionId = `seed-${seed}`;
  const snapshot = await sessions.getAgentSnapshot(sessionId);
  const executions = (await sessions.client.describe(sessionId)).executions.map((execution) => `${execution.stepType}:${execution.status}`);
  const history = (await sessions.client.getStepHistory(sessionId)).slice(-12).map((entry) => `${entry.stepType}.${entry.method}:${entry.status}#${entry.attempt}`);
  return JSON.stringify({ state: snapshot.state, queued: snapshot.queuedMessages.length, steered: snapshot.steeredMessages.length, toolCalls: snapshot.toolCalls.map((call) => [call.toolCallId, call.status]), executions, history });
}

interface BatchCounts { kills: number; steeredTurns: number; cancelledTurns: number }

async function runBatch(batch: readonly number[]): Promise<BatchCounts> {
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [turnControlRaceFlow], isWorkerInProcess: false });
  const sessions = new AgentSessionTestClient(environment.client, turnControlRaceFlow);
  const random = seededRandom((batch[0] ?? 1) * 7919);
  const processes: KillableWorkerProcess[] = [];
  let finished = false;
  const start = (killAt: number | null) => KillableWorkerProcess.start({
    entryModulePath,
    engineAddress: engine.address,
    environment: { [turnControlRaceDirectoryEnvironmentVariable]: engine.directory, ...(killAt === null ? {} : { [killAtBoundaryEnvironmentVariable]: String(killAt) }) },
  });
  let markReady!: () => void;
  const firstReady = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  // One Worker at a time, each but the last killed at a boundary drawn from the batch's seed.
  const supervisor = (async () => {
    for (let kill = 0; kill < maxKillsPerBatch && !finished; kill += 1) {
      // About eight boundaries per session, so a replayed seed alone is killed too.
      const workerProcess = await start(5 + Math.floor(random() * 8 * batch.length));
      processes.push(workerProcess);
      markReady();
      const exit = await Promise.race([workerProcess.exited, (async () => {
        while (!finished) await delay(50);
        return "finished";
      })()]);
      if (exit === "finished") return;
    }
    if (!finished) processes.push(await start(null));
    markReady();
  })();
  try {
    await firstReady;
    const failures: Error[] = [];
    await Promise.all(batch.map(async (seed) => {
      try {
        await runProgram(sessions, seed);
      } catch (error) {
        failures.push(new SeedFailure(seed, error));
      }
    }));
    for (const seed of batch) {
      if (failures.some((failure) => failure.message.startsWith(`seed ${seed} `))) continue;
      try {
        const snapshot = await drain(sessions, seed);
        checkSession(snapshot, turnControlRaceLog(engine.directory).entries().filter((entry) => entry.name === "charge").map((entry) => entry.details as RunEntry), seed);
        const turns = snapshot.state?.turnCount ?? 0;
        assert.equal(await sessions.sendUserMessage(`seed-${seed}`, "calls:lookup"), true, "the session takes a new message");
        await sessions.waitForTurnCount(`seed-${seed}`, turns + 1, { timeoutMs: 60_000 });
      } catch (error) {
        failures.push(new SeedFailure(seed, new Error(`${error instanceof Error ? error.message : String(error)}\n${await describeSession(sessions, seed)}`)));
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, failures.map((failure) => failure.message).join("\n\n"));
    const counts: BatchCounts = { kills: 0, steeredTurns: 0, cancelledTurns: 0 };
    for (const workerProcess of processes) if ((await Promise.race([workerProcess.exited, delay(0).then(() => "running")])) === "SIGKILL") counts.kills += 1;
    for (const seed of batch) {
      const events = await sessions.readEvents(`seed-${seed}`);
      counts.steeredTurns += events.filter((event) => event.type === "turn_steered").length;
      counts.cancelledTurns += events.filter((event) => event.type === "turn_cancelled").length;
    }
    return counts;
  } finally {
    finished = true;
    await supervisor.catch(() => undefined);
    for (const workerProcess of processes) await workerProcess.kill();
    await environment.close();
    await engine.stop();
  }
}

for (let index = 0; index < seeds.length; index += batchSize) {
  const batch = seeds.slice(index, index + batchSize);
  void test(`seeded turn-control races, seeds ${batch[0]}..${batch.at(-1)}: under Worker kills, sequences stay gapless, every call is final, no single-attempt tool runs twice, interrupts belong to the active turn, and the session takes a new message`, { timeout: 300_000 }, async (t) => {
    const counts = await runBatch(batch);
    t.diagnostic(`${counts.kills} Worker kills, ${counts.steeredTurns} steered turns, ${counts.cancelledTurns} cancelled turns`);
    if (batch.length >= batchSize) {
      assert.ok(counts.kills >= 1 && counts.steeredTurns >= 1 && counts.cancelledTurns >= 1, `the batch exercised kills, steering and cancellation: ${JSON.stringify(counts)}`);
    }
  });
}
