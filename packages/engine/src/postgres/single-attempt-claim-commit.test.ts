/**
 * The commit that confirms a single-attempt Step's claim before it starts
 * (`PostgresStore` option `singleAttemptClaimCommit`): sent for that Step
 * only, before its handler, with `synchronous_commit` raised for its own
 * transaction and never lowered. That it then waits for a synchronous
 * standby, and so keeps the claim through a failover, is shown with a real
 * standby by `packages/cli/src/failover/postgres-failover-named-standby.soak.ts`.
 * A commit keeps its row locks while it waits for a standby, so the
 * confirmation locks only its execution's row, and only when it holds it:
 * the session's other commits, which lock its Flow row, never wait for it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { Worker } from "../worker/worker.ts";
import { PostgresStore } from "./runtime/postgres-store.ts";
import type { PostgresStoreOptions } from "./runtime/postgres-store-options.ts";
import { createTemporaryPostgresSchema, type TemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

interface SentStatement {
  text: string;
  values: unknown[];
  reply: Promise<Record<string, unknown>[]>;
}

/** Confirmations answered so far, in this process. */
let confirmationsAnswered = 0;

// The confirmation raises synchronous_commit in its first CTE; the loop's claims and the heartbeats that lower it to off are not confirmations.
const isConfirmationText = (text: string): boolean => text.includes("WITH raised AS (SELECT set_config('synchronous_commit'");

/** Every statement this process sends through `pg` while `work` runs, with its values and its rows. */
async function statementsDuring(work: () => Promise<unknown>): Promise<SentStatement[]> {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const sent: SentStatement[] = [];
  prototype.query = function recordingQuery(this: unknown, ...args: unknown[]): unknown {
    const first = args[0] as string | { text?: unknown; values?: unknown[] };
    const text = typeof first === "string" ? first : String(first.text);
    const result = original.apply(this, args);
    const reply = result instanceof Promise ? (result as Promise<{ rows?: Record<string, unknown>[] }>).then((answer) => {
      if (isConfirmationText(text)) confirmationsAnswered += 1;
      return answer.rows ?? [];
    }, () => []) : Promise.resolve([]);
    sent.push({ text, values: typeof first === "string" ? (args[1] as unknown[] | undefined) ?? [] : first.values ?? [], reply });
    return result;
  };
  try {
    await work();
  } finally {
    prototype.query = original;
  }
  return sent;
}

/** A store on the temporary schema whose connections start at `synchronous_commit = level` (as a role's default would set it). */
async function openAt(temporary: TemporaryPostgresSchema, level: string, options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
  const separator = temporary.connectionString.includes("?") ? "&" : "?";
  return PostgresStore.open({ poolSize: 4, ...options, schema: temporary.schema, connectionString: `${temporary.connectionString}${separator}options=-c%20synchronous_commit%3D${level}` });
}

const isConfirmation = (statement: SentStatement): boolean => isConfirmationText(statement.text);

/** A Flow whose first Step retries (3 attempts) and whose second runs once; each notes how many confirmations were answered when it started. */
function flowNoting(startedAfter: Map<string, number>, answered: () => number) {
  return defineFlow({
    type: "ClaimCommitLevels",
    start: "Prepare",
    steps: [
      defineStep("Prepare", {
        executeOptions: { retry: { maximumAttempts: 3 } },
        execute: () => {
          startedAfter.set("Prepare", answered());
          return moveTo("Charge", {});
        },
      }),
      defineStep("Charge", {
        executeOptions: { retry: { maximumAttempts: 1 } },
        execute: () => {
          startedAfter.set("Charge", answered());
          return completeFlow({ charged: true });
        },
      }),
    ],
  });
}

void test("on PostgreSQL a single-attempt Step starts only after a commit that raised synchronous_commit confirmed its claim; a retried Step's claim is not confirmed", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  // The role's and server's default, whatever it is, set to local for these connections: ordinary commits wait for no standby.
  // The store's schema and tables first, then a store whose sessions start at local.
  await temporary.open();
  const store = await openAt(temporary, "local");
  t.after(() => store.close());
  const startedAfter = new Map<string, number>();
  confirmationsAnswered = 0;
  const flow = flowNoting(startedAfter, () => confirmationsAnswered);
  const client = new Client({ store });
  const worker = new Worker({ store, flows: [flow], concurrency: 2 });
  const sent = await statementsDuring(async () => {
    await worker.start();
    try {
      await client.start(flow, "charge-1", {});
      assert.equal((await client.waitForFlow("charge-1", { timeoutMs: 30_000 })).status, "completed");
    } finally {
      await worker.close();
    }
  });
  const confirmations = sent.filter(isConfirmation);
  assert.equal(confirmations.length, 1, "one confirmation, for the single-attempt Step only");
  const [confirmation] = confirmations;
  const charge = (await client.getStepHistory("charge-1")).find((entry) => entry.stepType === "Charge");
  assert.ok(confirmation !== undefined && charge !== undefined);
  assert.equal(confirmation.values[0], "charge-1");
  assert.equal(confirmation.values[1], charge.executionId, "it confirms the Charge execution's claim");
  assert.equal(confirmation.values[2], worker.workerId);
  assert.equal(confirmation.values[4], "on", "at the default level");
  const [row] = await confirmation.reply;
  assert.deepEqual(row, { level: "on", held: true }, "the transaction ran at synchronous_commit on, raised from local, and found the lease held");
  assert.equal(startedAfter.get("Prepare"), 0, "the retried Step started without a confirmation");
  assert.equal(startedAfter.get("Charge"), 1, "the single-attempt Step started after its confirmation was answered");
});

void test("the confirmation never lowers synchronous_commit, reports a lease the store no longer shows, and is not sent with singleAttemptClaimCommit inherit", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  await temporary.open();
  const applying = await openAt(temporary, "remote_apply", { singleAttemptClaimCommit: "remote_write" });
  t.after(() => applying.close());
  const client = new Client({ store: applying });
  const startedAfter = new Map<string, number>();
  const flow = flowNoting(startedAfter, () => 0);
  await client.start(flow, "levels-1", {});
  const worker = new Worker({ store: applying, flows: [flow], concurrency: 1 });
  const sent = await statementsDuring(async () => {
    await worker.start();
    try {
      assert.equal((await client.waitForFlow("levels-1", { timeoutMs: 30_000 })).status, "completed");
    } finally {
      await worker.close();
    }
  });
  const [confirmation] = sent.filter(isConfirmation);
  assert.ok(confirmation !== undefined);
  assert.equal(confirmation.values[4], "remote_write");
  assert.equal((await confirmation.reply)[0]?.level, "remote_apply", "a session at remote_apply keeps it");

  // A lease the store does not show (taken over, cancelled, or lost in a failover) is not confirmed.
  const { confirmClaim } = applying;
  assert.ok(confirmClaim !== undefined);
  const [charge] = (await client.getStepHistory("levels-1")).filter((entry) => entry.stepType === "Charge");
  assert.equal(await confirmClaim({ flowId: "levels-1", executionId: charge?.executionId ?? "", workerId: worker.workerId, leaseToken: 1 }), false);
  assert.equal(await confirmClaim({ flowId: "no-such-session", executionId: "1", workerId: worker.workerId, leaseToken: 1 }), false);

  const inheriting = await temporary.open({ singleAttemptClaimCommit: "inherit" });
  assert.equal(inheriting.confirmClaim, undefined);
  const plainClient = new Client({ store: inheriting });
  await plainClient.start(flow, "levels-2", {});
  const plainWorker = new Worker({ store: inheriting, flows: [flow], concurrency: 1 });
  const plainSent = await statementsDuring(async () => {
    await plainWorker.start();
    try {
      assert.equal((await plainClient.waitForFlow("levels-2", { timeoutMs: 30_000 })).status, "completed");
    } finally {
      await plainWorker.close();
    }
  });
  assert.equal(plainSent.filter(isConfirmation).length, 0, "inherit sends no confirmation");
});

void test("the confirmation does not take the session's Flow row lock: a transaction holding it does not delay a held lease's confirmation, nor an unheld one's", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  let release!: () => void;
  const handlerReleased = new Promise<void>((resolve) => (release = resolve));
  // Closed in this order after the test, whatever it reached.
  const opened: { worker?: Worker; holder?: pg.Client; store?: PostgresStore } = {};
  t.after(async () => {
    release();
    await opened.worker?.close();
    await opened.holder?.end();
    await opened.store?.close();
    await temporary.dispose();
  });
  await temporary.open();
  // A statement that waited for the Flow row would fail after this, instead of after the default 20 s.
  const store = await openAt(temporary, "local", { lockTimeoutMs: 10_000 });
  opened.store = store;
  let entered!: () => void;
  const handlerEntered = new Promise<void>((resolve) => (entered = resolve));
  const flow = defineFlow({
    type: "ConfirmBesideFlowLock",
    start: "Charge",
    steps: [
      defineStep("Charge", {
        executeOptions: { retry: { maximumAttempts: 1 } },
        execute: async () => {
          entered();
          await handlerReleased;
          return completeFlow({ charged: true });
        },
      }),
    ],
  });
  const client = new Client({ store });
  const worker = new Worker({ store, flows: [flow], concurrency: 1 });
  opened.worker = worker;
  await worker.start();
  await client.start(flow, "locked-1", {});
  // The handler runs: the lease is this Worker's until the handler returns.
  await handlerEntered;
  const { leases } = await temporary.rows({ leases: "SELECT execution_id, claimed_by, lease_token FROM executions WHERE flow_id = 'locked-1' AND claimed_by IS NOT NULL" });
  const [lease] = leases;
  assert.ok(lease !== undefined, "the Charge execution is leased");
  assert.equal(lease.claimed_by, worker.workerId);

  // Another transaction holds the session's Flow row, as every commit of the session (a message, an approval) takes it.
  const holder = new pg.Client({ connectionString: temporary.connectionString });
  opened.holder = holder;
  await holder.connect();
  await holder.query("BEGIN");
  const locked = await holder.query(`SELECT flow_id FROM ${pg.escapeIdentifier(temporary.schema)}.flows WHERE flow_id = 'locked-1' FOR UPDATE`);
  assert.equal(locked.rowCount, 1);
  const { confirmClaim } = store;
  assert.ok(confirmClaim !== undefined);
  const held = { flowId: "locked-1", executionId: String(lease.execution_id), workerId: worker.workerId, leaseToken: Number(lease.lease_token) };
  try {
    assert.equal(await confirmClaim(held), true, "the held lease is confirmed while the Flow row is locked elsewhere");
    assert.equal(await confirmClaim({ ...held, leaseToken: held.leaseToken + 1 }), false, "a lease token the store does not show is refused, without waiting either");
  } finally {
    await holder.query("ROLLBACK");
  }
  release();
  assert.equal((await client.waitForFlow("locked-1", { timeoutMs: 30_000 })).status, "completed");
});

/**
 * A store (lock timeout 5 s) whose single-attempt confirmations wait until
 * `answer()`, holding a lock on their execution's row meanwhile, as the
 * confirmation's commit does while it waits for a standby that does not
 * answer. What the test opens in `opened` is closed after it, in order.
 */
async function openWithWaitingConfirmation(t: { after(fn: () => Promise<void>): void }) {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const opened: { worker?: Worker; locker?: pg.Client; store?: PostgresStore } = {};
  t.after(async () => {
    answer();
    await opened.worker?.close();
    await opened.locker?.end();
    await opened.store?.close();
    await temporary.dispose();
  });
  await temporary.open();
  const store = await openAt(temporary, "local", { lockTimeoutMs: 5000 });
  opened.store = store;
  const held = new pg.Client({ connectionString: temporary.connectionString });
  opened.locker = held;
  await held.connect();
  let confirming: () => void = () => undefined;
  const confirmationWaits = new Promise<void>((resolve) => (confirming = resolve));
  let confirmed: () => void = () => undefined;
  const confirmationAnswered = new Promise<void>((resolve) => (confirmed = resolve));
  (store as { confirmClaim: PostgresStore["confirmClaim"] }).confirmClaim = async (lease) => {
    await held.query("BEGIN");
    await held.query(`SELECT 1 FROM ${pg.escapeIdentifier(temporary.schema)}.executions WHERE flow_id = $1 AND execution_id = $2 FOR KEY SHARE`, [lease.flowId, lease.executionId]);
    confirming();
    await answered;
    await held.query("COMMIT");
    // The Worker has the answer by the time this resolves.
    setImmediate(confirmed);
    return true;
  };
  return { temporary, store, opened, confirmationWaits, answer, confirmationAnswered };
}

void test("a Worker whose single-attempt claim's confirmation waits, holding its execution's row, still aborts another attempt whose Flow was stopped", { skip }, async (t) => {
  // A statement that waited for the execution's row fails after this; the cancellation check would fail so on every try.
  const { store, opened, confirmationWaits, answer } = await openWithWaitingConfirmation(t);
  const charge = defineFlow({
    type: "ConfirmationWaits",
    start: "Charge",
    steps: [defineStep("Charge", { executeOptions: { retry: { maximumAttempts: 1 } }, execute: () => completeFlow({ charged: true }) })],
  });
  let slowStarted!: () => void;
  const slowRuns = new Promise<void>((resolve) => (slowStarted = resolve));
  let slowAborted!: () => void;
  const slowStopped = new Promise<void>((resolve) => (slowAborted = resolve));
  const slow = defineFlow({
    type: "StoppedMeanwhile",
    start: "Wait",
    steps: [defineStep("Wait", {
      execute: async (context) => {
        slowStarted();
        await new Promise<void>((resolve) => context.cancellationSignal.addEventListener("abort", () => resolve(), { once: true }));
        slowAborted();
        return completeFlow({});
      },
    })],
  });
  const worker = new Worker({ store, flows: [charge, slow], concurrency: 2 });
  opened.worker = worker;
  await worker.start();
  const client = new Client({ store });
  // The waiting confirmation's attempt comes first among the Worker's attempts, so a check that read it would read it first.
  await client.start(charge, "waiting-1", {});
  await confirmationWaits;
  await client.start(slow, "stopped-1", {});
  await slowRuns;
  await client.stop("stopped-1");
  // The Worker's cancellation check aborts the stopped Flow's attempt; had it read the waiting one's row, it would fail on every try.
  await slowStopped;
  answer();
  assert.equal((await client.waitForFlow("waiting-1", { timeoutMs: 30_000 })).status, "completed", "the Step starts once its claim is confirmed");
});

void test("a Worker closing while a single-attempt claim's confirmation waits, holding its execution's row, does not hand that attempt back and waits for no lock", { skip }, async (t) => {
  // A release that waited for the execution's row fails after this, and the Worker reports it (the test's uncaught error).
  const { temporary, store, opened, confirmationWaits, answer, confirmationAnswered } = await openWithWaitingConfirmation(t);
  let handlerRan = false;
  const flow = defineFlow({
    type: "ClosingWhileConfirming",
    start: "Charge",
    steps: [defineStep("Charge", {
      executeOptions: { retry: { maximumAttempts: 1 } },
      execute: () => {
        handlerRan = true;
        return completeFlow({ charged: true });
      },
    })],
  });
  const errors: unknown[] = [];
  const worker = new Worker({ store, flows: [flow], concurrency: 1, onError: (error) => errors.push(error) });
  opened.worker = worker;
  await worker.start();
  const client = new Client({ store });
  await client.start(flow, "closing-1", {});
  await confirmationWaits;
  assert.deepEqual(await worker.close({ drainTimeoutMs: 0 }), { released: 0 }, "the unstarted attempt is not handed back");
  assert.deepEqual(errors.map((error) => (error as Error).message), [], "nothing the Worker sent waited for the confirmation's lock");
  answer();
  // The Worker has had the answer ("held") by the time this runs.
  await confirmationAnswered;
  const { leases } = await temporary.rows({ leases: "SELECT claimed_by FROM executions WHERE flow_id = 'closing-1' AND step_type = 'Charge'" });
  assert.deepEqual(leases, [{ claimed_by: worker.workerId }], "its lease stays until it lapses with the closed Worker's liveness");
  assert.equal(handlerRan, false, "a closed Worker never starts it, even once the confirmation answers");
});
