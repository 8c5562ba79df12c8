/**
 * A Worker remembers the leases it ran to a confirmed commit. When the store
 * later shows one of them leased to it again (the database lost the commit,
 * as after a failover to a standby that lagged) and its claims are in doubt,
 * it must not adopt it as a lost claim reply and run it again: it records
 * the attempt failed with `CommitLost` and logs that the database lost
 * committed work.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, completeFlow, defineFlow, defineStep, moveTo, Worker, type LogFields, type PerdureLogger } from "../index.ts";
import type { ExecutionRow } from "../store/store.ts";
import { FaultInjectingStore } from "./fault-injecting-store.ts";
import { pollUntil } from "./poll-until.ts";
import { createTemporarySqliteStore } from "./temporary-sqlite-store.ts";

class RecordingLogger implements PerdureLogger {
  readonly errors: Array<{ fields: LogFields; message: string }> = [];
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(fields: LogFields, message: string): void { this.errors.push({ fields, message }); }
}

for (const variant of [
  { name: "an attempt whose confirmed commit the store lost (it shows the attempt leased to the Worker again)", forgetsClaim: false, logged: "the database lost committed work" },
  { name: "an attempt whose claim the store forgot too (it shows the execution unclaimed, an attempt earlier)", forgetsClaim: true, logged: "the store went back in time" },
]) void test(`${variant.name} is recorded as CommitLost, logged naming the session, and never run again`, { timeout: 300_000 }, async (t) => {
  const temporary = createTemporarySqliteStore();
  const workerId = "lost-commit-worker";
  let charges = 0;
  let claimedCharge: ExecutionRow | undefined;
  let releaseHold: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (releaseHold = resolve));
  let holding = false;
  const Charge = defineStep<null>("Charge", {
    executeOptions: { retry: { maximumAttempts: 1 } },
    execute: async (context) => {
      charges += 1;
      // The row as the store holds it while this attempt runs: what a lagging standby would still show.
      claimedCharge = await temporary.store.transaction((transaction) => transaction.getExecution(context.flowId, context.executionId));
      return moveTo("Hold", null);
    },
  });
  const Hold = defineStep<null>("Hold", {
    execute: async () => {
      holding = true;
      await held;
      return completeFlow("held");
    },
  });
  const Other = defineStep<null>("Other", { execute: () => completeFlow("other") });
  const chargeFlow = defineFlow({ type: "LostCommitCharge", start: "Charge", steps: [Charge, Hold] });
  const otherFlow = defineFlow({ type: "LostCommitOther", start: "Other", steps: [Other] });
  let strike = false;
  const store = new FaultInjectingStore(temporary.store, {
    transactionFaultRate: 0,
    chooseFault: (point) => {
      const claims = point.calls.some((call) => call.method === "updateExecution" && (call.args[2] as Partial<ExecutionRow>).claimedBy === workerId);
      if (!strike || point.stage !== "commit" || !claims) return undefined;
      strike = false;
      return "commit-outcome-unknown";
    },
  });
  const logger = new RecordingLogger();
  const worker = new Worker({ store, flows: [chargeFlow, otherFlow], workerId, concurrency: 4, pollIntervalMs: 20, logger, onError: () => undefined });
  t.after(async () => {
    releaseHold();
    await worker.close();
    await temporary.dispose();
  });
  await worker.start();
  const client = new Client({ store: temporary.store });
  await client.start(chargeFlow, "charge-1");
  await pollUntil(() => holding, { description: "Charge to commit and Hold to run" });
  const claimed = claimedCharge;
  assert.ok(claimed !== undefined && claimed.claimedBy === workerId);
  const lost: ExecutionRow = variant.forgetsClaim ? { ...claimed, claimedBy: null, attempt: claimed.attempt - 1, executeClaims: claimed.executeClaims - 1, leaseExpiresAt: null, deadlineAt: null } : claimed;

  // The database loses Charge's commit: the store shows the attempt leased to this Worker again.
  await temporary.store.transaction(async (transaction) => {
    if (await transaction.getExecution(lost.flowId, lost.executionId) === undefined) await transaction.insertExecution(lost);
    else await transaction.updateExecution(lost.flowId, lost.executionId, lost);
  });
  // A claim transaction whose reply is lost puts the Worker's claims in doubt, so it looks for lost claims.
  strike = true;
  await client.start(otherFlow, "other-1");
  await pollUntil(async () => (await client.getStepHistory("charge-1")).some((entry) => entry.stepType === "Charge" && entry.status === "failed") ? true : undefined,
    { timeoutMs: 30_000, description: "Charge's lost commit to be recorded" });

  assert.equal(charges, 1, "Charge never ran a second time");
  const failed = (await client.getStepHistory("charge-1")).filter((entry) => entry.stepType === "Charge" && entry.status === "failed");
  assert.equal(failed.length, 1);
  assert.match(failed[0]?.error ?? "", /^CommitLost: attempt 1 of Charge had committed, but the store shows it running again/);
  // The Worker logs once the failure is recorded: the history can show it first.
  const loggedNow = () => logger.errors.filter((entry) => entry.message.startsWith(variant.logged));
  await pollUntil(() => loggedNow().length > 0, { timeoutMs: 30_000, description: `the log "${variant.logged}"` });
  const logged = loggedNow();
  assert.equal(logged.length, 1, JSON.stringify(logger.errors));
  assert.equal(logged[0]?.fields.flowId, "charge-1");
  assert.equal(logged[0]?.fields.stepType, "Charge");
  assert.equal((await client.waitForFlow("other-1", { timeoutMs: 10_000 })).status, "completed", "the adopted claim still ran");
});

void test("a store whose commit position falls is reported once as having gone back in time, naming the sessions this Worker committed lately", { timeout: 300_000 }, async (t) => {
  const temporary = createTemporarySqliteStore();
  let position = 100n;
  // The store as a server that failed over would show it: SQLite has no commit position, so the test gives it one.
  const store = Object.assign(Object.create(temporary.store) as typeof temporary.store, { commitPosition: async () => position });
  const Done = defineStep<null>("Done", { execute: () => completeFlow("done") });
  const flow = defineFlow({ type: "PositionedFlow", start: "Done", steps: [Done] });
  const logger = new RecordingLogger();
  const worker = new Worker({ store, flows: [flow], pollIntervalMs: 20, livenessTimeoutMs: 500, logger, onError: () => undefined });
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  await worker.start();
  const client = new Client({ store: temporary.store });
  await client.start(flow, "positioned-1");
  assert.equal((await client.waitForFlow("positioned-1", { timeoutMs: 10_000 })).status, "completed");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(logger.errors.length, 0, "a position that grows is no news");
  position = 40n;
  await pollUntil(() => logger.errors.length > 0 ? true : undefined, { timeoutMs: 10_000, description: "the fall to be reported" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(logger.errors.length, 1, "reported once per fall");
  assert.match(logger.errors[0]?.message ?? "", /^the store went back in time: its commit position fell from 100 to 40, .*sessions this Worker committed in the last minute: positioned-1$/);
  assert.deepEqual(logger.errors[0]?.fields.sessions, ["positioned-1"]);
});
