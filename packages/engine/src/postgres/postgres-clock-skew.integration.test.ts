import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, type StepHistoryEntry } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { startWorkerProcess, type WorkerProcess } from "../testing/worker-process.ts";
import { mixedCharged, mixedFlow, mixedRecovery, readLog, type MixedInput } from "../worker/crash-fixtures/flows.ts";
import { realNow, timerFlow, type ClockLogEntry } from "./test-fixtures/clock-flows.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const workerMain = fileURLToPath(new URL("./test-fixtures/clock-worker-main.ts", import.meta.url));
const fiveMinutesMs = 5 * 60_000;
/** The Workers' liveness timeout (the default). */
const livenessTimeoutMs = 5000;
const timerAfterMs = 3000;

function readClockLog(path: string): ClockLogEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as ClockLogEntry);
}

const lapseErrors = (history: readonly StepHistoryEntry[]): StepHistoryEntry[] => history.filter((entry) => entry.status === "failed");

void test("Workers whose wall clocks are 5 minutes fast and 5 minutes slow run beside a normal one on PostgreSQL: no healthy claim is taken over, Timers fire on database time, and killed skewed Workers' Flows are taken over after the liveness timeout", {
  timeout: 180_000,
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const temporary = createTemporaryPostgresSchema(url);
  const store = await temporary.open();
  const client = new Client({ store });
  const folder = mkdtempSync(join(tmpdir(), "perdure-pg-clock-"));
  const effectsLog = join(folder, "effects.log");
  const clockLog = join(folder, "clock.log");
  const workers: WorkerProcess[] = [];
  t.after(async () => {
    for (const worker of workers) await worker.kill();
    await temporary.dispose();
    rmSync(folder, { recursive: true, force: true });
  });
  const spawnWorker = async (skewMs: number): Promise<WorkerProcess> => {
    const worker = await startWorkerProcess({
      entryModulePath: workerMain,
      env: { PERDURE_TEST_DATABASE_URL: url, PERDURE_PG_SCHEMA: temporary.schema },
      wallClockSkewMs: skewMs,
    });
    workers.push(worker);
    // The preload took: the child's wall clock is off by the skew.
    await pollUntil(() => /Date\.now\(\) - real = (-?\d+) ms/.exec(worker.output()), { timeoutMs: 10_000, description: "the child's clock report" });
    const reported = Number(/Date\.now\(\) - real = (-?\d+) ms/.exec(worker.output())?.[1]);
    assert.ok(Math.abs(reported - skewMs) < 1000, `worker ${worker.pid} reports a skew of ${reported} ms, expected ${skewMs}`);
    return worker;
  };
  // Phase 0: each skewed Worker alone sets and fires Timers, so each is known to have done
  // so (side by side, which Worker fires a Timer is up to scheduling).
  const timerIds: string[] = [];
  const timerPids = new Map<string, number>();
  const runTimersAlone = async (worker: WorkerProcess, label: string): Promise<void> => {
    const ids = Array.from({ length: 12 }, (_, index) => `timer-${label}-${String(index).padStart(2, "0")}`);
    for (const flowId of ids) await client.start(timerFlow, flowId, { logPath: clockLog, afterMs: timerAfterMs });
    await pollUntil(async () => (await client.listFlows({ flowType: timerFlow.flowType, status: "running", limit: 1 })).length === 0, {
      timeoutMs: 90_000, intervalMs: 200, description: `every Timer Flow to finish on the ${label} Worker`,
    });
    for (const flowId of ids) timerPids.set(flowId, worker.pid);
    timerIds.push(...ids);
  };
  const slowAlone = await spawnWorker(-fiveMinutesMs);
  await runTimersAlone(slowAlone, "slow");
  assert.equal(await slowAlone.stop(), 0);
  const fast = await spawnWorker(fiveMinutesMs);
  await runTimersAlone(fast, "fast");
  const slow = await spawnWorker(-fiveMinutesMs);

  // Phase 1: side by side. Pauses make claims overlap every Worker's recovery sweep.
  const normal = await spawnWorker(0);
  const mixedInput: MixedInput = { logPath: effectsLog, minPauseMs: 200, maxPauseMs: 700 };
  const mixedIds = Array.from({ length: 48 }, (_, index) => `side-${String(index).padStart(2, "0")}`);
  for (const flowId of mixedIds) await client.start(mixedFlow, flowId, mixedInput);
  await pollUntil(async () => (await client.listFlows({ flowType: mixedFlow.flowType, status: "running", limit: 1 })).length === 0, {
    timeoutMs: 90_000, intervalMs: 200, description: "every side-by-side Flow to finish",
  });

  const effects = readLog(effectsLog);
  for (const worker of [normal, fast, slow]) assert.ok(effects.some((entry) => entry.pid === worker.pid), `worker ${worker.pid} ran no Step`);
  for (const flowId of mixedIds) {
    const history = await client.getStepHistory(flowId);
    assert.deepEqual(lapseErrors(history).map((entry) => entry.error), [], `${flowId}: an attempt of a healthy Worker failed`);
    const [wasCharged, recoveryError] = await client.getAttributes(flowId, mixedCharged, mixedRecovery);
    assert.equal(wasCharged, true, `${flowId} was not charged`);
    assert.equal(recoveryError, undefined, `${flowId} was routed to recovery`);
    for (const step of ["Reserve", "Charge", "Ship"]) {
      const starts = effects.filter((entry) => entry.flowId === flowId && entry.step === step && entry.event === "start");
      assert.equal(starts.length, 1, `${flowId}: ${step} started ${starts.length} times`);
    }
  }
  const clockEntries = readClockLog(clockLog);
  for (const entry of clockEntries) assert.equal(entry.pid, timerPids.get(entry.flowId), `${entry.flowId} was ${entry.event} by another Worker than the one running alone`);
  let latestMs = 0;
  for (const flowId of timerIds) {
    const fired = clockEntries.find((entry) => entry.flowId === flowId && entry.event === "fired");
    assert.ok(fired !== undefined, `${flowId}: the Timer never fired`);
    const asked = clockEntries.find((entry) => entry.flowId === flowId && entry.event === "asked")!;
    // Due 3 s after the wait was set; reading the database clock may be off by a few milliseconds.
    assert.ok(fired.realAt >= asked.realAt + timerAfterMs - 100, `${flowId}: fired ${Math.round(fired.realAt - asked.realAt)} ms after it was set, before its ${timerAfterMs} ms`);
    assert.ok(fired.realAt <= asked.realAt + timerAfterMs + 30_000, `${flowId}: fired ${Math.round(fired.realAt - asked.realAt)} ms after it was set`);
    latestMs = Math.max(latestMs, fired.realAt - asked.realAt);
    assert.equal(lapseErrors(await client.getStepHistory(flowId)).length, 0);
  }
  t.diagnostic(`side by side: ${mixedIds.length} Flows without a lapsed attempt; alone: ${timerIds.length} Timers of ${timerAfterMs} ms fired by the skewed Workers after at most ${Math.round(latestMs)} ms`);

  // Phase 2: both skewed Workers die while they hold long attempts; the normal one takes over.
  const longInput: MixedInput = { logPath: effectsLog, minPauseMs: 1500, maxPauseMs: 2500 };
  const longIds = Array.from({ length: 24 }, (_, index) => `kill-${String(index).padStart(2, "0")}`);
  for (const flowId of longIds) await client.start(mixedFlow, flowId, longInput);
  const holding = (worker: WorkerProcess): boolean => {
    const entries = readLog(effectsLog).filter((entry) => entry.pid === worker.pid && entry.flowId.startsWith("kill-"));
    const ended = new Set(entries.filter((entry) => entry.event === "end").map((entry) => `${entry.flowId}/${entry.step}/${entry.attempt}`));
    return entries.some((entry) => entry.event === "start" && !ended.has(`${entry.flowId}/${entry.step}/${entry.attempt}`));
  };
  await pollUntil(() => holding(fast) && holding(slow), { timeoutMs: 30_000, intervalMs: 20, description: "both skewed Workers to run a long attempt" });
  const killedAt = realNow();
  await Promise.all([fast.kill(), slow.kill()]);
  await pollUntil(async () => (await client.listFlows({ flowType: mixedFlow.flowType, status: "running", limit: 1 })).length === 0, {
    timeoutMs: 90_000, intervalMs: 200, description: "every Flow of the killed Workers to finish",
  });
  const takeovers = new Map<string, number[]>([[fast.workerId, []], [slow.workerId, []]]);
  for (const flowId of longIds) {
    assert.equal((await client.describe(flowId)).status, "completed");
    for (const entry of lapseErrors(await client.getStepHistory(flowId))) {
      const lostWorker = /^WorkerLost: Worker (\S+) stopped/.exec(entry.error ?? "")?.[1];
      assert.ok(lostWorker !== undefined && takeovers.has(lostWorker), `${flowId}: unexpected failure ${entry.error ?? ""}`);
      takeovers.get(lostWorker)!.push(entry.finishedAt.getTime() - killedAt);
    }
  }
  for (const [workerId, delays] of takeovers) {
    assert.ok(delays.length > 0, `no attempt of killed Worker ${workerId} was taken over`);
    // Its liveness was last written at most one maintenance tick (1 s) before the kill.
    for (const delayMs of delays) {
      assert.ok(delayMs >= livenessTimeoutMs - 1000 - 100, `an attempt of ${workerId} was taken over ${Math.round(delayMs)} ms after the kill, before its liveness lapsed`);
      assert.ok(delayMs <= livenessTimeoutMs + 10_000, `an attempt of ${workerId} was taken over only ${Math.round(delayMs)} ms after the kill`);
    }
  }
  const summary = [...takeovers].map(([workerId, delays]) => `${workerId === fast.workerId ? "+5 min" : "-5 min"}: ${delays.length} taken over after ${Math.round(Math.min(...delays))}–${Math.round(Math.max(...delays))} ms`).join("; ");
  t.diagnostic(`killed skewed Workers: ${summary}`);
  console.log(`postgres clock skew: timers at most ${Math.round(latestMs)} ms; ${summary}`);
  assert.equal(await normal.stop(), 0);
});
