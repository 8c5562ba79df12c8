/**
 * Crash tests: real Worker child processes on one SQLite file, SIGKILLed at
 * exact points (a handler parked at a file gate) or at random moments, then
 * replaced. What really ran is counted in an append-only file log outside
 * the database; what committed is read back through the Client.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, StepAttemptProgress, type FlowStatus, type StepHistoryEntry } from "../index.ts";
import { createTemporarySqliteStore, pollUntil, startWorkerProcess, type WorkerProcess } from "../testing/index.ts";
import {
  charged, checkpointFlow, commits, counter, mixedCharged, mixedCounter, mixedFlow, mixedRecovery, readLog, recovery, resumedFrom,
  retriedFlow, singleAttemptFlow, type GatedInput, type LogEntry, type MixedInput,
} from "./crash-fixtures/flows.ts";

const entryModulePath = fileURLToPath(new URL("./crash-fixtures/worker-main.ts", import.meta.url));

interface Harness {
  client: Client;
  logPath: string;
  gatePath: string;
  input: GatedInput;
  /** Starts a Worker child on the test's SQLite file. */
  spawnWorker(env?: Record<string, string>): Promise<WorkerProcess>;
  waitForStatus(flowId: string, status: FlowStatus, timeoutMs?: number): Promise<void>;
  /** Polls the file log until an entry matches. */
  waitForLog(description: string, match: (entry: LogEntry) => boolean): Promise<LogEntry>;
}

function setUp(t: TestContext): Harness {
  const temporary = createTemporarySqliteStore();
  const folder = dirname(temporary.path);
  const client = new Client({ store: temporary.store });
  const logPath = join(folder, "effects.log");
  const gatePath = join(folder, "gate");
  const children: WorkerProcess[] = [];
  t.after(async () => {
    for (const child of children) await child.kill();
    for (const child of children) {
      const extra = child.output().split("\n").filter((line) => line !== "" && !line.startsWith("perdure test worker ready"));
      if (extra.length > 0) t.diagnostic(`worker ${child.pid} printed:\n${extra.join("\n")}`);
    }
    await temporary.dispose();
  });
  return {
    client,
    logPath,
    gatePath,
    input: { logPath, gatePath },
    spawnWorker: async (env = {}) => {
      const child = await startWorkerProcess({ entryModulePath, env: { ...env, PERDURE_CRASH_STORE_PATH: temporary.path } });
      children.push(child);
      return child;
    },
    waitForStatus: async (flowId, status, timeoutMs = 30_000) => {
      const reached = await pollUntil(async () => {
        const current = (await client.describe(flowId)).status;
        return current === "running" ? false : current;
      }, { timeoutMs, intervalMs: 25, description: `Flow ${flowId} to finish` });
      assert.equal(reached, status, `Flow ${flowId} ended ${reached}: ${JSON.stringify(await client.describe(flowId))}`);
    },
    waitForLog: (description, match) => pollUntil(() => readLog(logPath).find(match), { timeoutMs: 20_000, intervalMs: 10, description }),
  };
}

function starts(log: readonly LogEntry[], flowId: string, step: string): LogEntry[] {
  return log.filter((entry) => entry.flowId === flowId && entry.step === step && entry.event === "start");
}

function completedExecutes(history: readonly StepHistoryEntry[], stepType: string): StepHistoryEntry[] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed");
}

function logRecovery(t: TestContext, what: string, ms: number): void {
  const text = `recovery after SIGKILL (${what}): ${ms} ms`;
  t.diagnostic(text);
  console.log(text);
}

void test("(a) a retried Step killed before any heartbeat is rerun by a surviving Worker and commits exactly once", { timeout: 300_000 }, async (t) => {
  const h = setUp(t);
  const doomed = await h.spawnWorker();
  await h.client.start(retriedFlow, "a-1", h.input);
  await h.waitForLog("CountGated to start", (entry) => entry.step === "CountGated" && entry.event === "start");
  const survivor = await h.spawnWorker();

  const killedAt = Date.now();
  await doomed.kill();
  writeFileSync(h.gatePath, "");
  await h.waitForStatus("a-1", "completed");

  const log = readLog(h.logPath);
  assert.equal(starts(log, "a-1", "CountFirst").length, 1);
  const gated = starts(log, "a-1", "CountGated");
  assert.deepEqual(gated.map((entry) => [entry.pid, entry.attempt]), [[doomed.pid, 1], [survivor.pid, 2]], "the handler ran twice, once per Worker");
  const [value] = await h.client.getAttributes("a-1", counter);
  assert.equal(value, 2, "each Step's commit added one to the counter, exactly once");
  assert.deepEqual((await h.client.describe("a-1")).output, { counter: 2 });
  const history = await h.client.getStepHistory("a-1");
  assert.equal(completedExecutes(history, "CountFirst").length, 1);
  assert.equal(completedExecutes(history, "CountGated").length, 1);
  const failed = history.filter((entry) => entry.stepType === "CountGated" && entry.status === "failed");
  assert.equal(failed.length, 1);
  assert.match(failed[0]?.error ?? "", /^WorkerLost: /);

  const recoveryMs = gated[1]!.at - killedAt;
  logRecovery(t, "a: surviving Worker reran the attempt", recoveryMs);
  assert.ok(recoveryMs < 30_000);
  assert.equal(await survivor.stop(), 0, "the survivor drains and exits 0 on SIGTERM");
});

void test("(b) a Step killed after a heartbeat resumes from its checkpoint in a restarted Worker", { timeout: 300_000 }, async (t) => {
  const h = setUp(t);
  const doomed = await h.spawnWorker();
  await h.client.start(checkpointFlow, "b-1", h.input);
  await h.waitForLog("the step-3 checkpoint", (entry) => entry.event === "checkpointed step-3");

  const killedAt = Date.now();
  await doomed.kill();
  writeFileSync(h.gatePath, "");
  const restarted = await h.spawnWorker();
  await h.waitForStatus("b-1", "completed");

  const log = readLog(h.logPath).filter((entry) => entry.flowId === "b-1");
  const phasedStarts = starts(log, "b-1", "Phased");
  assert.deepEqual(
    phasedStarts.map((entry) => [entry.pid, entry.attempt, entry.checkpoint]),
    [[doomed.pid, 1, null], [restarted.pid, 2, "step-3"]],
    "the second attempt received ctx.heartbeatCheckpoint step-3",
  );
  const done = log.filter((entry) => entry.event.startsWith("did ")).map((entry) => [entry.event, entry.pid]);
  assert.deepEqual(done, [["did step-1", doomed.pid], ["did step-2", doomed.pid], ["did step-3", doomed.pid], ["did step-4", restarted.pid]], "no phase ran twice");
  const [resumed] = await h.client.getAttributes("b-1", resumedFrom);
  assert.equal(resumed, "step-3");

  const recoveryMs = phasedStarts[1]!.at - killedAt;
  logRecovery(t, "b: restarted Worker resumed from the checkpoint", recoveryMs);
  assert.ok(recoveryMs < 30_000);
  assert.equal(await restarted.stop(), 0);
});

void test("(c) a single-attempt Step killed mid-handler routes to its recovery Step and never runs twice", { timeout: 300_000 }, async (t) => {
  const h = setUp(t);
  const doomed = await h.spawnWorker();
  await h.client.start(singleAttemptFlow, "c-1", h.input);
  await h.waitForLog("ChargeOnce to start", (entry) => entry.step === "ChargeOnce" && entry.event === "start");

  const killedAt = Date.now();
  await doomed.kill();
  writeFileSync(h.gatePath, "");
  const restarted = await h.spawnWorker();
  await h.waitForStatus("c-1", "completed");
  // Give a wrongly retried attempt time to show up in the log.
  await delay(300);

  const log = readLog(h.logPath);
  assert.equal(starts(log, "c-1", "ChargeOnce").length, 1, "the single-attempt handler started once");
  const recoverStarts = starts(log, "c-1", "Recover");
  assert.equal(recoverStarts.length, 1);
  assert.equal(recoverStarts[0]?.pid, restarted.pid);
  const [wasCharged, recoveryError] = await h.client.getAttributes("c-1", charged, recovery);
  assert.equal(wasCharged, undefined, "the killed attempt committed nothing");
  assert.equal(recoveryError?.attemptProgress, StepAttemptProgress.NOT_COMPLETED);
  assert.equal(recoveryError?.stepType, "ChargeOnce");
  assert.equal(recoveryError?.type, "WorkerLost");
  assert.equal(recoveryError?.attempts, 1);
  assert.deepEqual((await h.client.describe("c-1")).output, { recovered: true });

  const recoveryMs = recoverStarts[0]!.at - killedAt;
  logRecovery(t, "c: recovery Step started", recoveryMs);
  assert.ok(recoveryMs < 30_000);
  assert.equal(await restarted.stop(), 0);
});

void test("(d) 100 Flows survive Worker processes SIGKILLed at random moments", { timeout: 300_000 }, async (t) => {
  const h = setUp(t);
  const flowCount = 100;
  const input: MixedInput = { logPath: h.logPath, minPauseMs: 150, maxPauseMs: 450 };
  const workers = [await h.spawnWorker(), await h.spawnWorker()];
  const flowIds = Array.from({ length: flowCount }, (_, index) => `d-${String(index).padStart(3, "0")}`);
  for (const flowId of flowIds) await h.client.start(mixedFlow, flowId, input);

  // Kill 3 to 5 times; one round kills both Workers at once.
  const killCount = 3 + Math.floor(Math.random() * 3);
  const bothRound = Math.floor(Math.random() * killCount);
  const kills: { at: number; victims: WorkerProcess[] }[] = [];
  // A Worker is busy when the log shows a handler of its process that has not ended.
  const busy = (worker: WorkerProcess): boolean => {
    const entries = readLog(h.logPath).filter((entry) => entry.pid === worker.pid);
    const ended = new Set(entries.filter((entry) => entry.event === "end").map((entry) => `${entry.flowId}/${entry.step}/${entry.attempt}`));
    return entries.some((entry) => entry.event === "start" && !ended.has(`${entry.flowId}/${entry.step}/${entry.attempt}`));
  };
  for (let round = 0; round < killCount; round++) {
    await delay(300 + Math.floor(Math.random() * 700));
    // Kill at a random moment, but only a Worker running a handler, so every kill interrupts something.
    // A committing Worker claims the next Steps itself, so work may sit on one Worker: pick among the busy ones.
    const victims = await pollUntil(async () => {
      const ready = [0, 1].filter((index) => busy(workers[index]!));
      if (ready.length > 0) return round === bothRound ? ready : [ready[Math.floor(Math.random() * ready.length)]!];
      // Fast rounds can outrun the work: once every Flow finished there is nothing left to interrupt.
      const running = await h.client.listFlows({ flowType: mixedFlow.flowType, status: "running", limit: 1 });
      return running.length === 0 ? "done" : false;
    }, { timeoutMs: 10_000, description: "a busy Worker to kill" });
    if (victims === "done") break;
    const at = Date.now();
    await Promise.all(victims.map((index) => workers[index]!.kill()));
    kills.push({ at, victims: victims.map((index) => workers[index]!) });
    for (const index of victims) workers[index] = await h.spawnWorker();
  }
  const started = Date.now();
  await pollUntil(async () => (await h.client.listFlows({ flowType: mixedFlow.flowType, status: "running" })).length === 0, {
    timeoutMs: 45_000, intervalMs: 100, description: "every Flow to finish",
  });
  t.diagnostic(`all Flows finished ${Date.now() - started} ms after the last restart`);
  const log = readLog(h.logPath);

  let recovered = 0;
  let workerLost = 0;
  const histories = new Map<string, StepHistoryEntry[]>();
  let retriedStarts = 0;
  for (const flowId of flowIds) {
    const description = await h.client.describe(flowId);
    assert.equal(description.status, "completed", `${flowId}: ${JSON.stringify(description)}`);
    const history = await h.client.getStepHistory(flowId);
    histories.set(flowId, history);
    workerLost += history.filter((entry) => entry.error?.startsWith("WorkerLost: ") === true).length;

    // At most once: the single-attempt Step's handler never started twice.
    const chargeStarts = starts(log, flowId, "Charge");
    assert.ok(chargeStarts.length <= 1, `${flowId}: Charge started ${chargeStarts.length} times`);
    const [count, wasCharged, recoveryError] = await h.client.getAttributes(flowId, mixedCounter, mixedCharged, mixedRecovery);
    if (wasCharged === true) {
      assert.equal(chargeStarts.length, 1, `${flowId}: Charge committed without a start in the log`);
      assert.equal(recoveryError, undefined, `${flowId}: both charged and recovered`);
      assert.equal(completedExecutes(history, "Charge").length, 1);
    } else {
      recovered++;
      assert.equal(recoveryError?.stepType, "Charge", `${flowId}: neither charged nor recovered`);
      assert.equal(recoveryError?.attemptProgress, StepAttemptProgress.NOT_COMPLETED);
      assert.equal(recoveryError?.attempts, 1);
      assert.equal(completedExecutes(history, "ChargeRecover").length, 1);
    }

    // Exactly once: each retried Step committed one attempt, however often its handler ran.
    assert.equal(count, 2, `${flowId}: the counter should be 2`);
    for (const step of ["Reserve", "Ship"]) {
      assert.equal(completedExecutes(history, step).length, 1, `${flowId}: ${step} completed more than once`);
      const stepStarts = starts(log, flowId, step);
      retriedStarts += Math.max(0, stepStarts.length - 1);
      const maxAttempt = Math.max(0, ...stepStarts.map((entry) => entry.attempt), ...history.filter((entry) => entry.stepType === step).map((entry) => entry.attempt));
      const refs = Array.from({ length: maxAttempt + 1 }, (_, index) => commits.instance(`${step}@${index + 1}`));
      const committed = (await h.client.getAttributes(flowId, ...refs)).filter((value) => value !== undefined);
      assert.equal(committed.length, 1, `${flowId}: ${step} commits by attempt: ${committed.length}`);
    }

    // A Ship attempt after a committed heartbeat resumes from its checkpoint.
    const shipEntries = log.filter((entry) => entry.flowId === flowId && entry.step === "Ship");
    for (const [index, entry] of shipEntries.entries()) {
      if (entry.event !== "start") continue;
      const packedBefore = shipEntries.slice(0, index).some((earlier) => earlier.event === "packed");
      if (packedBefore) assert.equal(entry.checkpoint, "packed", `${flowId}: Ship attempt ${entry.attempt} lost its checkpoint`);
    }
  }

  // The kills really landed inside running handlers; each interrupted attempt
  // was failed as WorkerLost (naming the killed Worker) and its Flow moved on.
  const finished = new Set(log.filter((entry) => entry.event === "end").map((entry) => `${entry.pid}/${entry.flowId}/${entry.step}/${entry.attempt}`));
  for (const [index, kill] of kills.entries()) {
    const pids = kill.victims.map((victim) => victim.pid);
    const interrupted = log.filter((entry) => entry.event === "start" && pids.includes(entry.pid) && !finished.has(`${entry.pid}/${entry.flowId}/${entry.step}/${entry.attempt}`));
    assert.ok(interrupted.length > 0, `kill ${index + 1} hit no running handler`);
    const detections: number[] = [];
    const recoveries: number[] = [];
    for (const entry of interrupted) {
      const victim = kill.victims.find((each) => each.pid === entry.pid)!;
      const lost = histories.get(entry.flowId)!.find((failed) => failed.status === "failed" && failed.stepType === entry.step && failed.attempt === entry.attempt);
      assert.ok(lost !== undefined, `${entry.flowId} ${entry.step} attempt ${entry.attempt}: no failed attempt in the history`);
      assert.ok(lost.error?.startsWith(`WorkerLost: Worker ${victim.workerId} stopped`), `${entry.flowId} ${entry.step} attempt ${entry.attempt}: ${lost.error}`);
      detections.push(lost.finishedAt.getTime() - kill.at);
      const next = log.find((later) => later.flowId === entry.flowId && later.at >= kill.at && later.pid !== entry.pid && later.event === "start");
      assert.ok(next !== undefined, `${entry.flowId} never progressed after kill ${index + 1}`);
      recoveries.push(next.at - kill.at);
    }
    const spread = (values: number[]): string => {
      const sorted = values.sort((left, right) => left - right);
      return `min ${sorted[0]} / median ${sorted[Math.floor(sorted.length / 2)]} / max ${sorted.at(-1)} ms`;
    };
    const text = `recovery after SIGKILL (d: kill ${index + 1} of ${kills.length}, ${pids.length} Worker(s), ${interrupted.length} interrupted handlers): `
      + `lapse detected ${spread(detections)}; next handler started ${spread(recoveries)}`;
    t.diagnostic(text);
    console.log(text);
    assert.ok(recoveries.at(-1)! < 30_000);
  }
  assert.ok(kills.length >= 2, `only ${kills.length} kill(s) landed before the work ran out`);
  t.diagnostic(`${kills.length} kills, ${workerLost} WorkerLost failures, ${retriedStarts} retried starts of Reserve/Ship, ${recovered} Charges routed to ChargeRecover`);
  console.log(`(d) ${kills.length} kills, ${workerLost} WorkerLost failures, ${retriedStarts} reruns of Reserve/Ship, ${recovered} Charges recovered`);
  assert.ok(workerLost > 0, "no attempt was lost to a kill");
  for (const worker of workers) assert.equal(await worker.stop(), 0);
});

void test("(e) a SIGTERMed Worker drains: its running attempts commit and none is lost", { timeout: 300_000 }, async (t) => {
  const h = setUp(t);
  const input: MixedInput = { logPath: h.logPath, minPauseMs: 100, maxPauseMs: 300 };
  const stopping = await h.spawnWorker();
  const flowIds = Array.from({ length: 20 }, (_, index) => `e-${String(index).padStart(2, "0")}`);
  for (const flowId of flowIds) await h.client.start(mixedFlow, flowId, input);
  await pollUntil(() => readLog(h.logPath).filter((entry) => entry.event === "start").length >= 12, { timeoutMs: 20_000, description: "handlers to run" });

  const stoppedAt = Date.now();
  assert.equal(await stopping.stop(), 0, "the Worker closed and exited 0");
  t.diagnostic(`graceful stop took ${Date.now() - stoppedAt} ms`);
  const atStop = readLog(h.logPath).filter((entry) => entry.pid === stopping.pid);
  const ended = new Set(atStop.filter((entry) => entry.event === "end").map((entry) => `${entry.flowId}/${entry.step}/${entry.attempt}`));
  const cut = atStop.filter((entry) => entry.event === "start" && !ended.has(`${entry.flowId}/${entry.step}/${entry.attempt}`));
  assert.deepEqual(cut, [], "every handler the stopping Worker started ran to its end");

  const replacement = await h.spawnWorker();
  await pollUntil(async () => (await h.client.listFlows({ flowType: mixedFlow.flowType, status: "running" })).length === 0, {
    timeoutMs: 30_000, intervalMs: 50, description: "every Flow to finish",
  });
  for (const flowId of flowIds) {
    assert.equal((await h.client.describe(flowId)).status, "completed");
    const failed = (await h.client.getStepHistory(flowId)).filter((entry) => entry.status !== "completed");
    assert.deepEqual(failed, [], `${flowId}: no attempt failed`);
    const [count, wasCharged] = await h.client.getAttributes(flowId, mixedCounter, mixedCharged);
    assert.equal(count, 2);
    assert.equal(wasCharged, true);
  }
  assert.equal(await replacement.stop(), 0);
});

// A restarted process that reuses its workerId must not refresh the dead
// predecessor's liveness and leave its claims stalled until their method timeout.
void test("(f) a Worker restarted with the same workerId recovers its predecessor's claims", {
  timeout: 60_000,
}, async (t) => {
  const h = setUp(t);
  const env = { PERDURE_CRASH_WORKER_ID: "stable-worker-1" };
  const doomed = await h.spawnWorker(env);
  await h.client.start(retriedFlow, "f-1", h.input);
  await h.waitForLog("CountGated to start", (entry) => entry.step === "CountGated" && entry.event === "start");
  await doomed.kill();
  writeFileSync(h.gatePath, "");
  const restarted = await h.spawnWorker(env);
  assert.equal(restarted.workerId, doomed.workerId);
  // Recovery normally takes about livenessTimeoutMs (1.5 s); allow 6 s.
  await h.waitForStatus("f-1", "completed", 6_000);
  const [value] = await h.client.getAttributes("f-1", counter);
  assert.equal(value, 2);
  assert.equal(await restarted.stop(), 0);
});
