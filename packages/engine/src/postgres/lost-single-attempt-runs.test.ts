/**
 * A single-attempt write that runs twice after the store went back in time
 * is always named by the Worker that ran it first (issue 37): under pure
 * asynchronous replication a failover can lose a write's claim, and another
 * Worker then runs it again; the Worker that ran it cannot stop that, but
 * it must say so, naming the session.
 *
 * The failover is played without one, on a real PostgreSQL: the tables are
 * copied while the session waits for its approval, Worker A runs the
 * approved write, and the copy is put back, so the store has gone back to
 * before the write's execution existed, as a promoted standby that lagged
 * would show it. Worker A learns of it from a fall of its commit position
 * (a reading the test lowers: rewinding rows does not rewind the WAL). The
 * three interleavings the asynchronous failover soak can produce:
 *
 * - A checks before anyone runs the write again: its execution is missing;
 * - Worker B runs it again before A checks: its history shows another run;
 * - A's attempt is still running when A checks, and ends after it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { channel } from "../channel/channel.ts";
import { Client } from "../client/client.ts";
import { received } from "../condition/condition.ts";
import { defineFlow } from "../flow/flow.ts";
import type { LogFields, PerdureLogger } from "../logging/perdure-logger.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { rpc } from "../rpc/rpc.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import type { PostgresStore } from "./runtime/postgres-store.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

class RecordingLogger implements PerdureLogger {
  readonly errors: Array<{ fields: LogFields; message: string }> = [];
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(fields: LogFields, message: string): void {
    this.errors.push({ fields, message });
  }
}

const approvals = channel<string>("Approvals");

/** The refund flow as one Worker hosts it: its `Charge` (one attempt) notes which Worker ran it, after `gate` opens. */
function payFlow(worker: string, runs: string[], gate: () => Promise<void> = () => Promise.resolve()) {
  return defineFlow({
    type: "LostRunPay",
    start: "AwaitApproval",
    persistence: { approvals },
    rpcs: { approve: rpc<string, string>({ name: "approve", handler: (context, approval) => context.publish(approvals, approval) }) },
    steps: [
      defineStep("AwaitApproval", { waitUntil: () => received(approvals), execute: () => moveTo("Charge", { order: "8009" }) }),
      defineStep<{ order: string }>("Charge", {
        executeOptions: { retry: { maximumAttempts: 1 } },
        execute: async () => {
          runs.push(worker);
          await gate();
          return completeFlow("charged");
        },
      }),
    ],
  });
}

/** A Flow whose one Step holds a Worker's slot until `released` settles. */
function holdFlow(released: Promise<void>, holding: Set<string>) {
  return defineFlow({
    type: "LostRunHold",
    start: "Hold",
    steps: [defineStep("Hold", {
      execute: async (context) => {
        holding.add(context.flowId);
        await released;
        return completeFlow();
      },
    })],
  });
}

/** Copies of the schema's tables (all but the Workers' liveness and the migrations), put back by `restore`. */
async function snapshotOf(admin: pg.Client, schema: string): Promise<{ restore(): Promise<void> }> {
  const result = await admin.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name NOT IN ('workers', 'schema_migrations', 'meta') AND table_name NOT LIKE 'copy_%'",
    [schema],
  );
  const tables = result.rows.map((row) => row.table_name);
  const quoted = (name: string): string => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`;
  for (const table of tables) await admin.query(`CREATE TABLE ${quoted(`copy_${table}`)} AS SELECT * FROM ${quoted(table)}`);
  return {
    // The Workers keep running meanwhile: TRUNCATE locks the tables one by one, so a Worker's transaction holding
    // a later one can deadlock with it. The server then rolls back one of the two; when it is this one, play it again.
    restore: async () => {
      for (;;) {
        try {
          await admin.query("BEGIN");
          await admin.query(`TRUNCATE ${tables.map(quoted).join(", ")}`);
          for (const table of tables) await admin.query(`INSERT INTO ${quoted(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${quoted(`copy_${table}`)}`);
          await admin.query("COMMIT");
          return;
        } catch (error) {
          await admin.query("ROLLBACK");
          if ((error as { code?: unknown }).code !== "40P01") throw error;
        }
      }
    },
  };
}

type Interleaving = "checked before the write runs again" | "run again before the check" | "still running at the check";

async function playLostWrite(interleaving: Interleaving, t: { after(fn: () => Promise<void>): void }): Promise<{ runs: string[]; errors: RecordingLogger["errors"] }> {
  const url = requireTestDatabaseUrl();
  const temporary = createTemporaryPostgresSchema(url);
  const store: PostgresStore = await temporary.open();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  let releaseHolds: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (releaseHolds = resolve));
  let openGate: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const holding = new Set<string>();
  const runs: string[] = [];
  const logger = new RecordingLogger();
  // Worker A's reading of the commit position: lowered by the test where a failover would lower it.
  let position = 1000n;
  let positionReads = 0;
  const storeOfA = Object.assign(Object.create(store) as PostgresStore, {
    commitPosition: () => {
      positionReads += 1;
      return Promise.resolve(position);
    },
  });
  const stillRunning = interleaving === "still running at the check";
  const workerA = new Worker({
    store: storeOfA, workerId: "worker-a", flows: [payFlow("A", runs, stillRunning ? () => gate : undefined), holdFlow(released, holding)],
    concurrency: stillRunning ? 2 : 1, pollIntervalMs: 20, livenessTimeoutMs: 1000, logger, onError: () => undefined,
  });
  const workerB = new Worker({ store, workerId: "worker-b", flows: [payFlow("B", runs), holdFlow(released, holding)], pollIntervalMs: 20, onError: () => undefined });
  t.after(async () => {
    releaseHolds();
    openGate();
    await workerB.close({ drainTimeoutMs: 0 });
    await workerA.close({ drainTimeoutMs: 0 });
    await admin.end();
    await temporary.dispose();
  });
  const client = new Client({ store });
  const pay = payFlow("client", []);
  const flowId = "lost-run-pay";
  const approve = async (): Promise<void> => {
    await client.invokeRPC(pay.approve, flowId, "approved");
  };
  const waitingForApproval = async (): Promise<true | undefined> => ((await client.describe(flowId))?.executions.some((execution) => execution.stepType === "AwaitApproval" && execution.status === "waiting") === true ? true : undefined);

  await workerA.start();
  await client.start(pay, flowId);
  await pollUntil(waitingForApproval, { description: "the session to wait for its approval" });
  // What the standby has when the primary dies: the session waits for its approval.
  const snapshot = await snapshotOf(admin, temporary.schema);
  await approve();
  if (stillRunning) {
    await pollUntil(() => (runs.length === 1 ? true : undefined), { description: "A to start the write" });
  } else {
    assert.equal((await client.waitForFlow(flowId, { timeoutMs: 60_000 })).status, "completed");
    // A's only slot is taken, so the write's next claim goes to B.
    await client.start(holdFlow(released, holding), "lost-run-hold");
    await pollUntil(() => (holding.has("lost-run-hold") ? true : undefined), { description: "A's slot to be taken" });
  }
  assert.deepEqual(runs, ["A"]);

  // The failover: the store goes back to before the approval, and A's commit position falls.
  await snapshot.restore();
  const runAgainByB = async (): Promise<void> => {
    await workerB.start();
    await pollUntil(waitingForApproval, { description: "the session to wait for its approval again" });
    await approve();
    assert.equal((await client.waitForFlow(flowId, { timeoutMs: 60_000 })).status, "completed");
  };
  if (interleaving === "run again before the check") await runAgainByB();
  // A has read the position from before the failover.
  await pollUntil(() => (positionReads > 0 ? true : undefined), { description: "A to read its commit position" });
  position = 400n;
  await pollUntil(() => (logger.errors.some((entry) => entry.message.startsWith("the store went back in time: its commit position fell")) ? true : undefined), { description: "A to notice the fall" });
  if (stillRunning) {
    // A claims again only once its check of the attempts it started is done: a Flow it then runs shows that.
    await client.start(holdFlow(released, holding), "lost-run-probe");
    await pollUntil(() => (holding.has("lost-run-probe") ? true : undefined), { description: "A to claim again after its check" });
    assert.ok(!logger.errors.some((entry) => entry.fields.stepType === "Charge"), "the write still runs: nothing to say yet");
    openGate();
  }
  await pollUntil(() => (logger.errors.some((entry) => entry.fields.stepType === "Charge") ? true : undefined), { description: "A to name the session whose write it ran" });
  if (interleaving === "checked before the write runs again") await runAgainByB();
  return { runs, errors: logger.errors };
}

const namesTheWrite = /^the store went back in time: session lost-run-pay \(LostRunPay\) no longer shows attempt 1 of Charge \(execution \d+\) that this Worker started, /;

void test("a write A ran is named when the store, gone back to before it, has not run it again yet; B runs it again", { skip, timeout: 300_000 }, async (t) => {
  const { runs, errors } = await playLostWrite("checked before the write runs again", t);
  assert.deepEqual(runs, ["A", "B"], "the store lost the write's claim, so B ran it a second time");
  const named = errors.filter((entry) => entry.fields.flowId === "lost-run-pay" && entry.fields.stepType === "Charge");
  assert.equal(named.length, 1, JSON.stringify(named));
  assert.match(named[0]?.message ?? "", namesTheWrite);
  assert.match(named[0]?.message ?? "", /the store has no such execution now \(its session went back to before it\); if the session makes the call again, whichever Worker claims it runs it a second time/);
  // The Step before it, which consumed the approval the store lost, waits for it again: not failed, said so.
  const waiting = errors.filter((entry) => entry.fields.stepType === "AwaitApproval");
  assert.equal(waiting.length, 1, JSON.stringify(waiting));
  assert.match(waiting[0]?.message ?? "", /the store shows it waiting for its condition again; if that is met again, it runs again$/);
});

void test("a write A ran that B ran again before A checked is named as run twice, from the session's history", { skip, timeout: 300_000 }, async (t) => {
  const { runs, errors } = await playLostWrite("run again before the check", t);
  assert.deepEqual(runs, ["A", "B"]);
  const named = errors.filter((entry) => entry.fields.flowId === "lost-run-pay" && entry.fields.stepType === "Charge");
  assert.equal(named.length, 1, JSON.stringify(named));
  assert.match(named[0]?.message ?? "", namesTheWrite);
  assert.match(named[0]?.message ?? "", /another run of it has finished since: it ran a second time$/);
});

void test("a write still running when A checks is checked once it ends, and named", { skip, timeout: 300_000 }, async (t) => {
  const { runs, errors } = await playLostWrite("still running at the check", t);
  assert.deepEqual(runs, ["A"]);
  const named = errors.filter((entry) => entry.fields.flowId === "lost-run-pay" && entry.fields.stepType === "Charge");
  assert.equal(named.length, 1, JSON.stringify(named));
  assert.match(named[0]?.message ?? "", namesTheWrite);
  assert.match(named[0]?.message ?? "", /the store has no such execution now/);
});
