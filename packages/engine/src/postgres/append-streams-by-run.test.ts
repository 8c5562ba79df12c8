/**
 * Migration 0016's `perdure_append_streams` (by runs) against 0013's (by
 * messages): the same batches, on two schemas, leave the same rows, and the
 * asynchronous commits of issue 40 (claims and heartbeats) relax only what
 * the decision allows.
 * docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { applyMigrations, postgresMigrations } from "./migrations/migrations.ts";
import { appendStreamsByRunMigration } from "./migrations/0016-append-streams-by-run.ts";
import { heartbeatStatementText } from "./runtime/postgres-one-request.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** One batch as the store sends it: [stream, value, capacity] per message. */
type Batch = { flowId: string; flowType: string; messages: [string, string, number][] };

/** Batches that cover runs, several Streams, an unsorted batch, a capacity change inside a Stream's run, trims within and across batches, and two Flows sharing a Flow type's budget. */
const batches: Batch[] = [
  { flowId: "a", flowType: "T", messages: [["events", "one", 1000], ["events", "two", 1000], ["events", "three", 1000]] },
  { flowId: "b", flowType: "T", messages: [["events", "x".repeat(300), 1000], ["progress", "p1", 50], ["progress", "p2", 50]] },
  { flowId: "a", flowType: "T", messages: [["progress", "q".repeat(30), 50], ["events", "y".repeat(400), 1000], ["progress", "r".repeat(30), 50]] },
  { flowId: "a", flowType: "T", messages: [["events", "z".repeat(500), 1000], ["events", "w".repeat(200), 600], ["events", "v".repeat(100), 600]] },
  { flowId: "c", flowType: "U", messages: [["events", "only", 3]] },
  { flowId: "b", flowType: "T", messages: [["events", "e".repeat(90), 1000], ["events", "f".repeat(90), 1000], ["progress", "g".repeat(45), 50]] },
  { flowId: "b", flowType: "T", messages: [] },
];

async function appendAll(client: pg.Client, schema: string): Promise<number[][]> {
  const indexes: number[][] = [];
  for (const batch of batches) {
    const result = await client.query<{ indexes: string[] }>(
      `SELECT ${pg.escapeIdentifier(schema)}.perdure_append_streams($1, $2, $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[], $9::text[]) AS indexes`,
      [batch.flowId, batch.flowType, batch.messages.map(([stream]) => stream), batch.messages.map(([, value]) => value),
        batch.messages.map(([, value]) => Buffer.byteLength(value)), batch.messages.map((_, position) => 1000 + position),
        batch.messages.map(([, , capacity]) => capacity), [`wake_${schema}`], ["{}"]],
    );
    indexes.push(result.rows[0]!.indexes.map(Number));
  }
  return indexes;
}

async function rowsOf(client: pg.Client, schema: string): Promise<unknown> {
  const quoted = pg.escapeIdentifier(schema);
  return {
    heads: (await client.query(`SELECT flow_id, stream, last_index::text FROM ${quoted}.stream_heads ORDER BY flow_id, stream`)).rows,
    // Messages in identity order (the ID values themselves come from each schema's own sequence).
    messages: (await client.query(`SELECT flow_id, stream, idx::text, flow_type, value, bytes::text, written_at::text FROM ${quoted}.stream_messages ORDER BY id`)).rows,
    usage: (await client.query(`SELECT flow_type, stream, bytes::text FROM ${quoted}.stream_usage ORDER BY flow_type, stream`)).rows,
  };
}

void test("perdure_append_streams by runs (0016) leaves the rows and indexes 0013's message-by-message writes leave, trims included", { skip }, async (t) => {
  const byMessage = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const byRun = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: byMessage.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await byMessage.dispose();
    await byRun.dispose();
  });
  // Every migration but 0016 leaves 0013's function in place.
  const without0016 = postgresMigrations.filter((migration) => migration !== appendStreamsByRunMigration);
  assert.equal(without0016.length, postgresMigrations.length - 1);
  await applyMigrations(client, byMessage.schema, pg.escapeIdentifier(byMessage.schema), without0016);
  await applyMigrations(client, byRun.schema, pg.escapeIdentifier(byRun.schema));
  const indexesByMessage = await appendAll(client, byMessage.schema);
  const indexesByRun = await appendAll(client, byRun.schema);
  assert.deepEqual(indexesByRun, indexesByMessage);
  const rows = await rowsOf(client, byRun.schema);
  assert.deepEqual(rows, await rowsOf(client, byMessage.schema));
  // The scenario did what it means: indexes continue across batches, and the budgets trimmed messages.
  assert.deepEqual(indexesByRun[2], [1, 4, 2]);
  const { messages, usage } = rows as { messages: { value: string }[]; usage: { flow_type: string; stream: string; bytes: string }[] };
  assert.ok(!messages.some((message) => message.value === "one"), "the oldest of the Flow type's events was trimmed");
  assert.ok(!messages.some((message) => message.value === "only"), "a message over its whole budget is trimmed at once");
  assert.ok(usage.every((row) => Number(row.bytes) <= (row.stream === "progress" ? 50 : row.flow_type === "U" ? 3 : 1000)));
});

void test("a heartbeat that stores no new checkpoint commits asynchronously; one that changes the checkpoint, and a loop claim of a store without claim confirmations, do not", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const confirming = await temporary.open();
  const inheriting = await temporary.open({ singleAttemptClaimCommit: "inherit" });
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await temporary.dispose();
  });
  assert.equal(confirming.oneRequest?.claimCommitsRelaxed, true);
  assert.equal(inheriting.oneRequest?.claimCommitsRelaxed, false);
  const schema = pg.escapeIdentifier(temporary.schema);
  await client.query(`INSERT INTO ${schema}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ('f', 'T', 'running', 'null', 0, 0, 2)`);
  await client.query(`INSERT INTO ${schema}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token, lease_expires_at, deadline_at,
      available_at, attempt, execute_claims, scheduled_at, checkpoint, created_at)
    VALUES ('f', '1', 1, 'T', 'S', 'null', 'ready', 'w', 3, 100, 1000, 0, 1, 1, 0, 'page-1', 0)`);
  /** Runs one heartbeat in a transaction and reports the transaction's synchronous_commit after it, and whether the lease was held. */
  const heartbeat = async (leaseToken: number, checkpoint: string | null): Promise<{ held: number; level: string; stored: string | null }> => {
    await client.query("BEGIN");
    try {
      const { held } = (await client.query<{ held: number }>(heartbeatStatementText(schema), ["f", "1", "w", leaseToken, 50, 100, checkpoint])).rows[0]!;
      const level = (await client.query<{ level: string }>("SELECT current_setting('synchronous_commit') AS level")).rows[0]!.level;
      await client.query("COMMIT");
      const stored = (await client.query<{ checkpoint: string | null }>(`SELECT checkpoint FROM ${schema}.executions WHERE flow_id = 'f' AND execution_id = '1'`)).rows[0]!.checkpoint;
      return { held, level, stored };
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    }
  };
  const serverLevel = (await client.query<{ level: string }>("SELECT current_setting('synchronous_commit') AS level")).rows[0]!.level;
  assert.notEqual(serverLevel, "off", "the test server commits synchronously by default");
  assert.deepEqual(await heartbeat(3, "page-1"), { held: 1, level: "off", stored: "page-1" });
  assert.deepEqual(await heartbeat(3, "page-2"), { held: 1, level: serverLevel, stored: "page-2" });
  assert.deepEqual(await heartbeat(3, null), { held: 1, level: serverLevel, stored: null });
  assert.deepEqual(await heartbeat(3, null), { held: 1, level: "off", stored: null });
  // A lease no longer held changes nothing: only the Flow row's lock, which need not wait for the flush.
  assert.deepEqual(await heartbeat(2, "page-9"), { held: 0, level: "off", stored: null });
});
