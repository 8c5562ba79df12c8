import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import pg from "pg";
import { startAndClaim } from "../testing/one-request-fixtures/chain-commit.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { commitRequestOf } from "./runtime/postgres-one-request.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

/**
 * A fresh schema, its store, and a second session for the test to play
 * another transaction in. The session ends before the schema is dropped
 * (an open transaction there would hold up the drop).
 */
async function openWithOtherSession(t: TestContext) {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const other = new pg.Client({ connectionString: temporary.connectionString });
  t.after(async () => {
    await other.end().catch(() => undefined);
    await temporary.dispose();
  });
  await other.connect();
  const store = await temporary.open();
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);
  const quoted = pg.escapeIdentifier(temporary.schema);
  /** Resolves once this schema's commit function waits for a lock. */
  const commitWaitsForLock = () => pollUntil(async () => {
    // Inside a transaction a session keeps its first view of pg_stat_activity; look afresh each time.
    await other.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await other.query<{ waiting: string }>(
      "SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0",
      [`${quoted}.perdure_commit_step(`],
    );
    return rows[0]?.waiting === "1";
  }, { timeoutMs: 10_000, description: "the commit waiting for the Flow row's lock" });
  return { temporary, store, operations, other, quoted, commitWaitsForLock };
}

void test("on PostgreSQL a handover whose execution is claimed away between the commit's read and its update is undone, sent again, and answered fenced", { skip }, async (t) => {
  const { store, operations, other, quoted, commitWaitsForLock } = await openWithOtherSession(t);
  const commit = { ...await startAndClaim(store, operations, "raced"), writes: [{ name: "note", key: "", value: JSON.stringify("lost") }] };

  const stateOf = async () => (await other.query<{ next_seq: string; updated_at: string; history: string; attributes: string; execution: string }>(
    `SELECT f.next_seq, f.updated_at,
       (SELECT count(*) FROM ${quoted}.history h WHERE h.flow_id = f.flow_id) AS history,
       (SELECT count(*) FROM ${quoted}.attributes a WHERE a.flow_id = f.flow_id) AS attributes,
       (SELECT string_agg(e.execution_id || ' ' || e.claimed_by || ' ' || e.lease_token, ', ') FROM ${quoted}.executions e WHERE e.flow_id = f.flow_id) AS execution
     FROM ${quoted}.flows f WHERE f.flow_id = 'raced'`,
  )).rows[0];

  // Another session holds the Flow's lock, so the commit's read passes and its update of the Flow waits.
  await other.query("BEGIN");
  await other.query(`SELECT 1 FROM ${quoted}.flows WHERE flow_id = 'raced' FOR UPDATE`);
  const committing = operations.commitStep(commit);
  await commitWaitsForLock();
  // Meanwhile the lease passes to another Worker, as a claim after its expiry would.
  await other.query(`UPDATE ${quoted}.executions SET claimed_by = 'worker-b', lease_token = lease_token + 1 WHERE flow_id = 'raced'`);
  const before = await stateOf();
  await other.query("COMMIT");

  const reply = await committing;
  assert.equal(reply.outcome, "fenced");
  assert.deepEqual(reply.claims, [], "nothing else was queued for the commit's claim to take");
  assert.deepEqual(await stateOf(), before, "the fenced commit left no trace: the Flow's counter, history, Attributes and execution are as the other Worker left them");
  assert.equal(before?.execution, `${commit.executionId} worker-b ${commit.leaseToken + 1}`);
});

void test("on PostgreSQL a handover that waited for its Flow's lock while the holder made an older task of that Flow ready leaves the new Step queued and claims the older task, as a commit under the lock would", { skip }, async (t) => {
  const { store, operations, other, quoted, commitWaitsForLock } = await openWithOtherSession(t);
  const commit = await startAndClaim(store, operations, "overtaken");

  await other.query("BEGIN");
  await other.query(`SELECT 1 FROM ${quoted}.flows WHERE flow_id = 'overtaken' FOR UPDATE`);
  const committing = operations.commitStep(commit);
  await commitWaitsForLock();
  // The lock holder makes a task of the same Flow ready, as a fired Timer or a sibling branch would.
  await other.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token,
      available_at, attempt, execute_claims, scheduled_at, created_at)
    VALUES ('overtaken', 'older', 0, 'OneRequestChain', 'Chain', '{"remaining":0}', 'ready', NULL, 0, 0, 0, 0, 0, 0)`);
  await other.query("COMMIT");

  const reply = await committing;
  assert.equal(reply.outcome, "committed");
  assert.deepEqual(reply.claims.map((claim) => [claim.execution.executionId, claim.execution.claimedBy]), [["older", "worker-a"]], "the claim took the older task");
  const { rows } = await other.query<{ execution_id: string; claimed_by: string | null }>(
    `SELECT execution_id, claimed_by FROM ${quoted}.executions WHERE flow_id = 'overtaken' ORDER BY execution_id`,
  );
  assert.deepEqual(rows.map((row) => [row.execution_id, row.claimed_by]), [["2", null], ["older", "worker-a"]], "the new Step waits, unleased, behind it");
});

void test("on PostgreSQL a handover in a group commit does not wait for an execution row another transaction holds: the member answers lock_not_available at once", { skip }, async (t) => {
  const { temporary, store, operations, other, quoted } = await openWithOtherSession(t);
  const commit = await startAndClaim(store, operations, "held");

  // A scan that locked the execution and skipped its Flow keeps that lock until its transaction ends.
  await other.query("BEGIN");
  await other.query(`SELECT 1 FROM ${quoted}.executions WHERE flow_id = 'held' FOR UPDATE`);

  const caller = new pg.Client({ connectionString: temporary.connectionString });
  await caller.connect();
  t.after(() => caller.end());
  await caller.query("SET statement_timeout = '10s'");
  const member = { ...commitRequestOf(commit, { timeoutMs: 300_000, heartbeatTimeoutMs: null }), catalogIndex: 0, noWait: true };
  const { rows } = await caller.query<{ reply: { outcome: string; code?: string }[] }>(
    `SELECT ${quoted}.perdure_commit_steps($1::jsonb, $2::jsonb) AS reply`,
    [JSON.stringify([member]), JSON.stringify([commit.claim?.catalog])],
  );
  await other.query("ROLLBACK");
  assert.deepEqual(rows[0]?.reply.map((answer) => [answer.outcome, answer.code]), [["error", "55P03"]]);
});
