import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { startAndClaim } from "../testing/one-trip-fixtures/chain-commit.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

void test("on PostgreSQL a handover whose execution is claimed away between the commit's read and its update is undone, sent again, and answered fenced", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneTrip;
  assert.ok(operations !== undefined);
  const commit = { ...await startAndClaim(store, operations, "raced"), writes: [{ name: "note", key: "", value: JSON.stringify("lost") }] };

  const quoted = pg.escapeIdentifier(temporary.schema);
  const other = new pg.Client({ connectionString: temporary.connectionString });
  await other.connect();
  t.after(() => other.end());
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
  await pollUntil(async () => {
    const { rows } = await other.query<{ waiting: string }>(
      "SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%perdure_commit_step%'",
    );
    return rows[0]?.waiting === "1";
  }, { timeoutMs: 10_000, description: "the commit waiting for the Flow row's lock" });
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
