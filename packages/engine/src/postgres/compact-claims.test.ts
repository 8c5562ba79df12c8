/**
 * Migration 0023's `perdure_claim_compact` claims what 0019's
 * `perdure_claim_plain` claims and answers the same, with each claimed row
 * as its values (no column names) and one statement fewer a claim; the
 * store decodes that reply to the row it stored.
 * docs/decisions/2026-12-07-leaner-claims-and-commits.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { applyMigrations } from "./migrations/migrations.ts";
import { compactClaimColumns } from "./migrations/0023-leaner-claims-and-commits.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** Two Flows' tasks: one whose Step type takes a lock and reads a range and its movement's Channel, one plain. */
async function seed(client: pg.Client, quoted: string): Promise<void> {
  await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq)
    VALUES ('a', 'T', 'running', 'null', 0, 0, 10), ('b', 'T', 'running', 'null', 0, 0, 10)`);
  await client.query(`INSERT INTO ${quoted}.attributes (flow_id, name, key, value) VALUES
    ('a', 'State', '', '{"turn":3}'), ('a', 'Usage', '', '7'), ('a', 'Log', '0001', '"one"'), ('a', 'Log', '0002', '"two"'), ('b', 'State', '', '"b"')`);
  await client.query(`INSERT INTO ${quoted}.messages (flow_id, seq, channel, key, message_id, value, published_at)
    VALUES ('a', 1, 'Inbox', '', '000000000001-5', '"hello"', 5)`);
  await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, lease_token, available_at, attempt,
      execute_claims, scheduled_at, wait_result, checkpoint, movement_options, recovery_error, last_error, created_at) VALUES
    ('a', '3', 3, 'T', 'Locked', '{"n":1}', 'ready', 4, 1, 2, 1, 1, '{"firedTimers":[],"messages":[]}', 'half done',
      '{"load":[{"kind":"channel","name":"Inbox","key":""}]}', NULL, 'boom', 1),
    ('b', '4', 4, 'T', 'Plain', '"x"', 'asking', 0, 2, 0, 0, 2, NULL, NULL, NULL, '{"type":"E"}', NULL, 2)`);
}

const catalog = JSON.stringify({
  "T Locked ready": [60_000, 5_000, ["Writer"], true, [{ kind: "range", name: "Log", fromKey: "", toKey: null, limit: 10 }]],
  "T Plain asking": [30_000, null, [], false, null],
});

interface KeyedReply { claims: { execution: Record<string, unknown>; attributes: unknown; loaded?: unknown }[]; stopped: boolean; skipped: boolean; more: boolean }
interface CompactReply { claims: [unknown[], unknown, unknown][]; stopped: boolean; skipped: boolean; more: boolean }

/** A claim by `claimFunction`, rolled back, with the locks it took. */
async function claimRolledBack<TReply>(client: pg.Client, quoted: string, claimFunction: string): Promise<{ reply: TReply; text: string; locks: unknown[] }> {
  await client.query("BEGIN");
  try {
    const { rows } = await client.query<{ reply: TReply; text: string }>(
      `SELECT reply, reply::text AS text FROM ${quoted}.${claimFunction}('w', ARRAY['T'], $1::jsonb, 5, 100) AS reply`,
      [catalog],
    );
    const locks = (await client.query(`SELECT flow_id, name, execution_id FROM ${quoted}.locks ORDER BY flow_id, name`)).rows;
    return { ...rows[0]!, locks };
  } finally {
    await client.query("ROLLBACK");
  }
}

void test("a compact claim takes and answers what 0019's claim does, each row as its values in compactClaimColumns' order", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await temporary.dispose();
  });
  const quoted = pg.escapeIdentifier(temporary.schema);
  await applyMigrations(client, temporary.schema, quoted);
  await seed(client, quoted);

  const keyed = await claimRolledBack<KeyedReply>(client, quoted, "perdure_claim_plain");
  const compact = await claimRolledBack<CompactReply>(client, quoted, "perdure_claim_compact");
  assert.equal(keyed.reply.claims.length, 2);
  assert.deepEqual(compact.locks, keyed.locks);
  assert.deepEqual(compact.locks, [{ flow_id: "a", name: "Writer", execution_id: "3" }]);
  assert.deepEqual([compact.reply.stopped, compact.reply.skipped, compact.reply.more], [keyed.reply.stopped, keyed.reply.skipped, keyed.reply.more]);
  for (const [index, claim] of compact.reply.claims.entries()) {
    const other = keyed.reply.claims[index]!;
    assert.equal(claim.length, 3);
    const [values, attributes, loaded] = claim;
    assert.equal(values.length, Object.keys(other.execution).length, "every column of the row");
    assert.deepEqual(Object.fromEntries(compactClaimColumns.map((column, position) => [column, values[position]])), other.execution);
    assert.deepEqual(attributes, other.attributes);
    assert.deepEqual(loaded, other.loaded ?? null);
  }
  // The loads read: the Step type's range, then the movement's Channel.
  assert.deepEqual(compact.reply.claims[0]![2], [[["0001", "\"one\""], ["0002", "\"two\""]], [[1, "000000000001-5", "\"hello\"", 5]]]);
  // Without the 23 column names in every claim.
  assert.ok(compact.text.length < keyed.text.length - 2 * 250, `compact ${compact.text.length} B, keyed ${keyed.text.length} B`);
});

void test("the store claims through perdure_claim_compact and decodes each claimed row to the row it stored", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  t.after(() => client.end());
  const quoted = pg.escapeIdentifier(temporary.schema);
  await seed(client, quoted);
  // Only the compact function answers: a claim through 0019's fails the test.
  await client.query(`ALTER FUNCTION ${quoted}.perdure_claim_plain(text, text[], jsonb, integer, bigint) RENAME TO perdure_claim_plain_unused`);
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);
  const reply = await operations.claimTasks({
    workerId: "w",
    now: 100,
    claim: { flowTypes: ["T"], limit: 5, catalog: JSON.parse(catalog) as Parameters<typeof operations.claimTasks>[0]["claim"]["catalog"] },
  });
  assert.equal(reply.claims.length, 2);
  for (const claim of reply.claims) {
    const stored = await operations.readFlow(claim.execution.flowId);
    assert.deepEqual(claim.execution, stored?.executions.find((execution) => execution.executionId === claim.execution.executionId));
  }
  const [locked, plain] = reply.claims;
  assert.deepEqual(locked?.plainAttributes, [{ name: "State", key: "", value: "{\"turn\":3}" }, { name: "Usage", key: "", value: "7" }]);
  assert.deepEqual(locked?.selection?.loaded, [
    [{ name: "Log", key: "0001", value: "\"one\"" }, { name: "Log", key: "0002", value: "\"two\"" }],
    [{ seq: 1, channel: "Inbox", key: "", messageId: "000000000001-5", value: "\"hello\"", publishedAt: 5 }],
  ]);
  assert.deepEqual(plain?.plainAttributes, [{ name: "State", key: "", value: "\"b\"" }]);
  assert.equal(plain?.selection, undefined);
});
