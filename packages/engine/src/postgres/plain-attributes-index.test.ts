/**
 * A claim reads the claimed Flow's plain Attributes. Migration 0018's
 * partial index keeps that read from walking the Flow's keyed rows, whose
 * number grows with a session's turns: the read's index and the buffers it
 * touches (EXPLAIN ANALYZE, generic plan as in the functions), with and
 * without the migration.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { applyMigrations, postgresMigrations } from "./migrations/migrations.ts";
import { plainAttributesIndexMigration } from "./migrations/0018-plain-attributes-index.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);
const keyedRows = 2000;

/** Claims one task of a Flow with 3 plain and `keyedRows` keyed Attributes; returns the claim's plain Attributes, and the index and buffers of the same read run alone. */
async function claimReads(client: pg.Client, schema: string): Promise<{ plain: string[]; index: string; buffers: number }> {
  const quoted = pg.escapeIdentifier(schema);
  await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ('f', 'T', 'running', 'null', 0, 0, 2)`);
  await client.query(`INSERT INTO ${quoted}.attributes (flow_id, name, key, value)
    SELECT 'f', name, '', '1' FROM unnest(ARRAY['State', 'Usage', 'Pending']) AS name
    UNION ALL SELECT 'f', 'Records', lpad(n::text, 12, '0'), repeat('x', 200) FROM generate_series(1, ${keyedRows}) AS n`);
  await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, lease_token, available_at, attempt, execute_claims, scheduled_at, created_at)
    VALUES ('f', '1', 1, 'T', 'S', 'null', 'ready', 0, 0, 0, 0, 0, 0)`);
  await client.query(`ANALYZE ${quoted}.attributes`);
  await client.query("BEGIN");
  try {
    const { rows } = await client.query<{ reply: { claims: { attributes: [string, string][] }[] } }>(
      `SELECT ${quoted}.perdure_claim_plain('w', ARRAY['T'], '{"T S ready": [60000, null, []]}'::jsonb, 1, 10) AS reply`,
    );
    const [claim] = rows[0]!.reply.claims;
    // The claim's read of the plain Attributes, with the Flow ID a parameter and a generic plan, as in the functions.
    await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
    await client.query(`PREPARE plain_read(text) AS SELECT coalesce(jsonb_agg(jsonb_build_array(a.name, a.value)), '[]'::jsonb)
      FROM ${quoted}.attributes a WHERE a.flow_id = $1 AND a.key = ''`);
    const explained = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE plain_read('f')");
    const plan = explained.rows[0]!["QUERY PLAN"][0].Plan;
    return { plain: (claim?.attributes ?? []).map(([name]) => name).sort(), index: indexesOf(plan).join(",") || "none", buffers: plan["Shared Hit Blocks"] + plan["Shared Read Blocks"] };
  } finally {
    await client.query("ROLLBACK");
    await client.query("DEALLOCATE ALL");
  }
}

interface PlanNode {
  "Index Name"?: string;
  "Shared Hit Blocks": number;
  "Shared Read Blocks": number;
  Plans?: PlanNode[];
}

const indexesOf = (node: PlanNode): string[] => [...(node["Index Name"] === undefined ? [] : [node["Index Name"]]), ...(node.Plans ?? []).flatMap(indexesOf)];

void test("a claim reads the Flow's plain Attributes without walking its keyed rows (migration 0018)", { skip }, async (t) => {
  const withIndex = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const without = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: withIndex.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await withIndex.dispose();
    await without.dispose();
  });
  await applyMigrations(client, withIndex.schema, pg.escapeIdentifier(withIndex.schema));
  await applyMigrations(client, without.schema, pg.escapeIdentifier(without.schema), postgresMigrations.filter((migration) => migration !== plainAttributesIndexMigration));
  const indexed = await claimReads(client, withIndex.schema);
  const walked = await claimReads(client, without.schema);
  assert.deepEqual(indexed.plain, ["Pending", "State", "Usage"]);
  assert.deepEqual(walked.plain, indexed.plain);
  assert.equal(indexed.index, "attributes_plain");
  assert.notEqual(walked.index, "attributes_plain");
  // Without it, the read walks the keyed rows' index entries (or the table); with it, a page or two.
  assert.ok(walked.buffers >= 8, `without the index the read touched ${walked.buffers} buffers`);
  assert.ok(indexed.buffers <= 4, `with the index the read touched ${indexed.buffers} buffers`);
});
