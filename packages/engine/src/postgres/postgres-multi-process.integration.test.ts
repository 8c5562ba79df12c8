import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, type StepHistoryEntry } from "../index.ts";
import { StepAttemptProgress } from "../step/recovery-error.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { startWorkerProcess, type WorkerProcess } from "../testing/worker-process.ts";
import { commits, mixedCharged, mixedCounter, mixedFlow, mixedRecovery, readLog, type LogEntry, type MixedInput } from "../worker/crash-fixtures/flows.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const workerMain = fileURLToPath(new URL("./test-fixtures/postgres-worker-main.ts", import.meta.url));

function starts(log: readonly LogEntry[], flowId: string, step: string): LogEntry[] {
  return log.filter((entry) => entry.flowId === flowId && entry.step === step && entry.event === "start");
}

function completedExecutes(history: readonly StepHistoryEntry[], stepType: string): StepHistoryEntry[] {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed");
}

void test("4 Worker processes on one PostgreSQL schema finish 200 Flows through random SIGKILLs: single-attempt effects at most once, retried effects committed exactly once", {
  timeout: 180_000,
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const temporary = createTemporaryPostgresSchema(url);
  const store = await temporary.open();
  const client = new Client({ store });
  const folder = mkdtempSync(join(tmpdir(), "perdure-pg-multi-"));
  const logPath = join(folder, "effects.log");
  const workers: WorkerProcess[] = [];
  t.after(async () => {
    for (const worker of workers) await worker.kill();
    await temporary.dispose();
    rmSync(folder, { recursive: true, force: true });
  });
  const spawnWorker = (): Promise<WorkerProcess> =>
    startWorkerProcess({ entryModulePath: workerMain, env: { PERDURE_TEST_DATABASE_URL: url, PERDURE_PG_SCHEMA: temporary.schema, PERDURE_PG_CONCURRENCY: "8" } });
  for (let index = 0; index < 4; index++) workers.push(await spawnWorker());

  const input: MixedInput = { logPath, minPauseMs: 50, maxPauseMs: 400 };
  const flowIds = Array.from({ length: 200 }, (_, index) => `m-${String(index).padStart(3, "0")}`);
  for (const flowId of flowIds) await client.start(mixedFlow, flowId, input);

  // A Worker is busy when the log shows a handler of its process that has not ended.
  const busy = (worker: WorkerProcess): boolean => {
    const entries = readLog(logPath).filter((entry) => entry.pid === worker.pid);
    const ended = new Set(entries.filter((entry) => entry.event === "end").map((entry) => `${entry.flowId}/${entry.step}/${entry.attempt}`));
    return entries.some((entry) => entry.event === "start" && !ended.has(`${entry.flowId}/${entry.step}/${entry.attempt}`));
  };
  let kills = 0;
  for (let round = 0; round < 6; round++) {
    await delay(300 + Math.floor(Math.random() * 500));
    if ((await client.listFlows({ flowType: mixedFlow.flowType, status: "running", limit: 1 })).length === 0) break;
    // Kill one busy Worker (two every third round) at a random moment, then restart it.
    const busyIndexes = workers.map((worker, index) => (busy(worker) ? index : -1)).filter((index) => index >= 0).sort(() => Math.random() - 0.5);
    const victims = busyIndexes.slice(0, round % 3 === 1 ? 2 : 1);
    await Promise.all(victims.map((index) => workers[index]!.kill()));
    kills += victims.length;
    for (const index of victims) workers[index] = await spawnWorker();
  }
  const restartedAt = Date.now();
  await pollUntil(async () => (await client.listFlows({ flowType: mixedFlow.flowType, status: "running", limit: 1 })).length === 0, {
    timeoutMs: 90_000, intervalMs: 200, description: "every Flow to finish",
  });
  t.diagnostic(`${kills} Worker processes killed; all Flows finished ${Date.now() - restartedAt} ms after the last restart`);

  const log = readLog(logPath);
  let recovered = 0;
  let workerLost = 0;
  for (const flowId of flowIds) {
    const description = await client.describe(flowId);
    assert.equal(description.status, "completed", `${flowId}: ${JSON.stringify(description)}`);
    const history = await client.getStepHistory(flowId);
    workerLost += history.filter((entry) => entry.error?.startsWith("WorkerLost: ") === true).length;

    // At most once: the single-attempt Step's handler never started twice, counted outside the database.
    const chargeStarts = starts(log, flowId, "Charge");
    assert.ok(chargeStarts.length <= 1, `${flowId}: Charge started ${chargeStarts.length} times`);
    const [count, wasCharged, recoveryError] = await client.getAttributes(flowId, mixedCounter, mixedCharged, mixedRecovery);
    if (wasCharged === true) {
      assert.equal(recoveryError, undefined, `${flowId}: both charged and recovered`);
      assert.equal(completedExecutes(history, "Charge").length, 1);
    } else {
      recovered++;
      assert.equal(recoveryError?.stepType, "Charge", `${flowId}: neither charged nor recovered`);
      assert.notEqual(recoveryError?.attemptProgress, undefined);
      if (chargeStarts.length === 1) assert.equal(recoveryError?.attemptProgress, StepAttemptProgress.NOT_COMPLETED);
      assert.equal(completedExecutes(history, "ChargeRecover").length, 1);
    }

    // Exactly once: each retried Step committed one attempt, however often its handler ran.
    assert.equal(count, 2, `${flowId}: the counter should be 2`);
    for (const step of ["Reserve", "Ship"]) {
      assert.equal(completedExecutes(history, step).length, 1, `${flowId}: ${step} completed ${completedExecutes(history, step).length} times`);
      const maxAttempt = Math.max(1, ...starts(log, flowId, step).map((entry) => entry.attempt), ...history.filter((entry) => entry.stepType === step).map((entry) => entry.attempt));
      const refs = Array.from({ length: maxAttempt }, (_, index) => commits.instance(`${step}@${index + 1}`));
      const committed = (await client.getAttributes(flowId, ...refs)).filter((value) => value !== undefined);
      assert.equal(committed.length, 1, `${flowId}: ${step} has ${committed.length} committed attempts`);
    }
  }
  const summary = `${kills} kills, ${workerLost} WorkerLost failures, ${recovered} Charges routed to ChargeRecover, ${log.filter((entry) => entry.event === "start").length} handler starts`;
  t.diagnostic(summary);
  console.log(`postgres multi-process: ${summary}`);
  assert.ok(kills > 0, "no Worker was killed while busy");
  for (const worker of workers) assert.equal(await worker.stop(), 0);
  workers.length = 0;
});
