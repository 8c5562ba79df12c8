/**
 * The boundary-kill loop over an order Flow: real Worker child processes on
 * a real SQLite file, SIGKILLed at each durable boundary in turn (claims,
 * commits, the `release` RPC's commit), replaced, and checked. What really
 * ran is counted in an append-only file outside the store.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "../client/client.ts";
import { SqliteStore } from "../sqlite/sqlite-store.ts";
import { StepAttemptProgress } from "../step/recovery-error.ts";
import {
  chargeOutcome, chargeRecovery, orderEnvironmentVariables, orderFlow, orderFlowId, readOrderEffects, released, releasesConsumed, reservations,
} from "./boundary-kill-fixtures/order-flow.ts";
import { runBoundaryKillLoop } from "./boundary-kill-loop.ts";
import { formatBoundaryKillReport } from "./boundary-kill-report.ts";
import type { BoundaryKillRunResult, BoundaryKillScenario } from "./boundary-kill-scenario.ts";
import { startWorkerProcess } from "./worker-process.ts";

const entryModulePath = fileURLToPath(new URL("./boundary-kill-fixtures/order-worker-main.ts", import.meta.url));

interface OrderRun {
  storePath: string;
  store: SqliteStore;
  client: Client;
  effectLogPath: string;
}

function completedExecutes(history: readonly { stepType: string; method: string; status: string }[], stepType: string): number {
  return history.filter((entry) => entry.stepType === stepType && entry.method === "execute" && entry.status === "completed").length;
}

/** What must hold after every run of the order Flow, kill or no kill. */
async function checkOrderInvariants(run: OrderRun, result: BoundaryKillRunResult): Promise<void> {
  const { client } = run;
  const description = await client.describe(orderFlowId);
  assert.equal(description.status, "completed", `the order ended ${description.status}`);
  const history = await client.getStepHistory(orderFlowId);
  const effects = readOrderEffects(run.effectLogPath);
  const [reserved, isReleased, consumed, outcome, recovery] = await client.getAttributes(orderFlowId, reservations, released, releasesConsumed, chargeOutcome, chargeRecovery);

  assert.equal(reserved, 1, "Reserve's commit landed exactly once");
  assert.equal(completedExecutes(history, "Reserve"), 1);
  const reserves = effects.filter((effect) => effect.effect === "reserve").length;
  assert.ok(reserves >= 1 && reserves <= 2, `Reserve ran ${reserves} times; one kill reruns it at most once`);
  assert.equal(isReleased, true);
  assert.equal(consumed, 1, "the release was published and consumed exactly once");

  const charges = effects.filter((effect) => effect.effect === "charge");
  assert.ok(charges.length <= 1, `the single-attempt Charge ran ${charges.length} times`);
  if (completedExecutes(history, "Charge") === 1) {
    assert.equal(outcome, "charged");
    assert.equal(charges.length, 1);
    assert.deepEqual(description.output, { outcome: "charged" });
    assert.equal(completedExecutes(history, "RecordChargeUnknown"), 0);
  } else {
    // Its Worker died between the claim and the commit: the charge may or may not have happened.
    assert.equal(outcome, "unknown", "a Charge that never committed is recorded as unknown");
    assert.deepEqual(description.output, { outcome: "unknown" });
    assert.equal(completedExecutes(history, "RecordChargeUnknown"), 1, "the unknown outcome is recorded exactly once");
    assert.equal(recovery?.stepType, "Charge");
    assert.equal(recovery?.type, "WorkerLost");
    assert.equal(recovery?.attemptProgress, StepAttemptProgress.NOT_COMPLETED);
    assert.equal(recovery?.attempts, 1);
    assert.ok(charges.every((charge) => charge.processId === result.firstProcessId), "only the killed process charged");
  }
  const killedAt = result.killedAt;
  if (killedAt?.detail === "Charge" && killedAt.name === "worker.commit.before-commit") {
    assert.equal(charges.length, 1, "killed after its side effect, before its record");
    assert.equal(outcome, "unknown", "a charge killed before its record is unknown, not rerun");
  }
  if (killedAt === undefined) {
    assert.deepEqual(effects.map((effect) => effect.effect), ["reserve", "charge"], "without a kill every Step ran once");
    assert.ok(history.every((entry) => entry.status === "completed"), "without a kill no attempt failed");
  }
}

/** Variants of the order scenario. */
interface OrderScenarioOptions {
  /** Charge's attempts in the Worker processes; anything but 1 is the broken Flow. @default 1 */
  chargeAttempts?: number;
  /** Give the replacement a Worker ID of its own, so only the lapse of the killed Worker's liveness frees its leases. @default false */
  isReplacementNewWorker?: boolean;
  /** Run every commit, claim and start as a general transaction, as a store without one-request operations does. @default false */
  generalPath?: boolean;
}

function orderScenario(options: OrderScenarioOptions = {}): BoundaryKillScenario<OrderRun> {
  return {
    name: "engine order Flow",
    standsBy: true,
    setUp: async ({ directory }) => {
      const storePath = join(directory, "engine.db");
      const store = SqliteStore.open({ path: storePath, durability: "process-crash-safe" });
      return { storePath, store, client: new Client({ store }), effectLogPath: join(directory, "effects.jsonl") };
    },
    startProcess: (run, start) => startWorkerProcess({
      entryModulePath,
      env: {
        ...start.environment,
        [orderEnvironmentVariables.storePath]: run.storePath,
        [orderEnvironmentVariables.chargeAttempts]: String(options.chargeAttempts ?? 1),
        ...(start.isReplacement && options.isReplacementNewWorker === true ? { [orderEnvironmentVariables.workerId]: "boundary-kill-order-replacement" } : {}),
        ...(options.generalPath === true ? { [orderEnvironmentVariables.generalPath]: "1" } : {}),
      },
      readyTimeoutMs: start.readyTimeoutMs,
    }),
    begin: async (run) => {
      await run.client.start(orderFlow, orderFlowId, { effectLogPath: run.effectLogPath });
    },
    isAtEnd: async (run) => {
      const description = await run.client.describe(orderFlowId);
      return description.status === "completed" && description.executions.length === 0;
    },
    readStepHistory: (run, flowId) => run.client.getStepHistory(flowId),
    describeState: async (run) => {
      const description = await run.client.describe(orderFlowId);
      const history = await run.client.getStepHistory(orderFlowId);
      return JSON.stringify({
        status: description.status,
        executions: description.executions.map((execution) => `${execution.stepType} ${execution.status}`),
        history: history.map((entry) => `${entry.stepType}.${entry.method} ${entry.status}#${entry.attempt}${entry.error === null ? "" : ` ${entry.error}`}`),
      });
    },
    checkInvariants: checkOrderInvariants,
    tearDown: async (run) => {
      await run.store.close();
    },
  };
}

async function killAtEveryBoundary(t: TestContext, options: OrderScenarioOptions, boundaryNames: readonly string[]): Promise<void> {
  const report = await runBoundaryKillLoop(orderScenario(options), { concurrency: 2 });
  t.diagnostic(formatBoundaryKillReport(report));

  const names: string[] = report.completeRun.map((entry) => entry.name);
  for (const name of boundaryNames) {
    assert.ok(names.includes(name), `a run without a kill passes ${name}`);
    assert.ok(report.boundaries.some((coverage) => coverage.name === name), `the loop killed at ${name}`);
  }
  assert.equal(report.kills, report.runs.filter((run) => run.killedAt !== undefined).length);
  assert.ok(report.kills >= report.completeRun.length, `every boundary of the ${report.completeRun.length} of a whole run was killed at (${report.kills} kills)`);
  assert.deepEqual(report.violations, []);
}

void test("an order Flow killed at each durable boundary in turn completes with every commit kept and its single-attempt charge never run twice", { timeout: 300_000 }, async (t) => {
  // Plain commits go as one request; the Worker's claims are general transactions on SQLite.
  await killAtEveryBoundary(t, {}, ["worker.claim.before-commit", "worker.claim.after-commit", "worker.commit.before-commit", "worker.commit.after-commit", "rpc.before-commit"]);
});

void test("the same, with every commit, claim and start a general transaction", { timeout: 300_000 }, async (t) => {
  await killAtEveryBoundary(t, { generalPath: true }, ["worker.claim.before-commit", "worker.claim.after-commit", "worker.commit.before-commit", "worker.commit.after-commit", "rpc.before-commit"]);
});

void test("a replacement with a Worker ID of its own reruns the killed Worker's claim once its liveness lapses, with default options", { timeout: 300_000 }, async (t) => {
  const scenario = orderScenario({ isReplacementNewWorker: true });
  let workerLostEntries = 0;
  const report = await runBoundaryKillLoop({
    ...scenario,
    checkInvariants: async (run, result) => {
      await scenario.checkInvariants(run, result);
      workerLostEntries = (await run.client.getStepHistory(orderFlowId)).filter((entry) => entry.stepType === "Reserve" && /^WorkerLost: /.test(entry.error ?? "")).length;
    },
  }, { fromBoundary: 2, toBoundary: 2 });
  t.diagnostic(formatBoundaryKillReport(report));

  const [run] = report.runs;
  assert.equal(run?.killedAt?.name, "worker.claim.after-commit", "killed while it held Reserve's lease");
  assert.equal(run.killedAt.detail, "Reserve");
  assert.equal(workerLostEntries, 1, "the lapsed liveness failed the killed attempt as WorkerLost, once");
  assert.ok(run.recoveryMs !== undefined, "the Flow finished after the replacement started");
});

void test("the loop catches a Charge that a broken Flow reruns after its Worker died after charging", { timeout: 300_000 }, async () => {
  // Boundary 11 is Charge's commit: the release driver waits for the wait, so every run passes the boundaries in one order.
  // (It was 12 while the Worker's loop claimed what the release RPC readied; the RPC's transaction claims it now.)
  const report = await runBoundaryKillLoop(orderScenario({ chargeAttempts: 3 }), { fromBoundary: 10, toBoundary: 12, concurrency: 2, failOnViolation: false });

  assert.deepEqual(report.runs.map((run) => `${run.killedAt?.name} ${run.killedAt?.detail}`), [
    "worker.commit.after-commit AwaitRelease", "worker.commit.before-commit Charge", "worker.commit.after-commit Charge",
  ], formatBoundaryKillReport(report));
  const caught = report.violations.filter((violation) => violation.killedAt?.name === "worker.commit.before-commit" && violation.killedAt.detail === "Charge");
  assert.equal(caught.length, 1, formatBoundaryKillReport(report));
  for (const violation of caught) assert.match(violation.message, /the single-attempt Charge ran 2 times/);
  assert.ok(report.violations.every((violation) => violation.killedAt?.detail === "Charge"), formatBoundaryKillReport(report));
});

void test("the loop reports a stuck Flow and a lost acknowledged commit with the boundary of its kill", { timeout: 300_000 }, async () => {
  const scenario = orderScenario();
  const broken: BoundaryKillScenario<OrderRun> = {
    ...scenario,
    // Never at its end: the run is stuck, however well the Flow did.
    isAtEnd: async () => false,
    // A history without Reserve: its acknowledged commit looks lost.
    readStepHistory: async (run, flowId) => (await run.client.getStepHistory(flowId)).filter((entry) => entry.stepType !== "Reserve"),
  };
  await assert.rejects(runBoundaryKillLoop(broken, { fromBoundary: 4, toBoundary: 4, endTimeoutMs: 1500 }), (error: unknown) => {
    assert.ok(error instanceof assert.AssertionError);
    assert.match(error.message, /^runBoundaryKillLoop found 2 violations/);
    assert.match(error.message, /VIOLATION killed at #4 worker\.commit\.after-commit \(order-1 Reserve\) \(run 4\): stuck: the scenario did not reach its end within 1500 ms after the replacement started/);
    assert.match(error.message, /acknowledged commit lost: boundary 4 \(worker\.commit\.after-commit of order-1 Reserve/);
    return true;
  });
});
