/**
 * Migration 0017's `perdure_commit_step` writes Attributes by update first:
 * the rows end as 0011's upserts leave them (a schema without 0017 runs the
 * same commits), and a value equal to the stored one gets no new row
 * version. docs/decisions/2026-12-07-asynchronous-claims-and-heartbeats.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { applyMigrations, postgresMigrations } from "./migrations/migrations.ts";
import { commitStepAttributeWritesMigration } from "./migrations/0017-commit-step-attribute-writes.ts";
import { leanerClaimsAndCommitsMigration } from "./migrations/0023-leaner-claims-and-commits.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** Attribute writes as the Worker sends them: [name, stored key, value or null to delete]. */
const commits: [string, string, string | null][][] = [
  [["State", "", "{\"turn\":1}"], ["Usage", "", "1"], ["Doomed", "", "x"], ["Log", "a", "first"]],
  // Unchanged, changed, deleted, new, and one key written twice (the last wins), then deleted and written again.
  [["State", "", "{\"turn\":1}"], ["Usage", "", "2"], ["Doomed", "", null], ["Log", "b", "second"], ["Log", "c", "one"], ["Log", "c", "two"],
    ["Log", "a", null], ["Log", "a", "again"]],
  // Deleting a missing row, and writing a value that equals the stored one after a change in the same commit.
  [["Nothing", "", null], ["Usage", "", "3"], ["Usage", "", "2"]],
];

async function commitAll(client: pg.Client, schema: string): Promise<{ outcomes: string[]; versions: string[] }> {
  const quoted = pg.escapeIdentifier(schema);
  await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ('f', 'T', 'running', 'null', 0, 0, 100)`);
  const outcomes: string[] = [];
  const versions: string[] = [];
  for (const [index, writes] of commits.entries()) {
    const executionId = String(index + 1);
    await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token, lease_expires_at,
        deadline_at, available_at, attempt, execute_claims, scheduled_at, created_at)
      VALUES ('f', $1, $2, 'T', 'S', 'null', 'ready', 'w', 1, 1000, 1000, 0, 1, 1, 0, 0)`, [executionId, index + 1]);
    const { rows } = await client.query<{ reply: { outcome: string } }>(`SELECT ${quoted}.perdure_commit_step($1::jsonb, '{}'::jsonb) AS reply`, [JSON.stringify({
      flowId: "f", executionId, workerId: "w", leaseToken: 1, method: "execute", now: 10 + index, startedAt: 5,
      writes, movements: [], finish: null, ready: null, outcome: "{\"kind\":\"move\"}", historyKeep: 0, holdsLocks: false, claim: null, handover: null,
    })]);
    outcomes.push(rows[0]!.reply.outcome);
    // The row version of State, which every commit writes with the same value.
    versions.push((await client.query<{ version: string }>(`SELECT xmin::text AS version FROM ${quoted}.attributes WHERE flow_id = 'f' AND name = 'State'`)).rows[0]!.version);
  }
  return { outcomes, versions };
}

const attributesOf = async (client: pg.Client, schema: string): Promise<{ name: string; key: string; value: string }[]> =>
  (await client.query<{ name: string; key: string; value: string }>(`SELECT name, key, value FROM ${pg.escapeIdentifier(schema)}.attributes ORDER BY flow_id, name, key`)).rows;

void test("perdure_commit_step with 0017 leaves the Attributes 0011's upserts leave, and rewrites no unchanged value", { skip }, async (t) => {
  const upserting = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const updating = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: upserting.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await upserting.dispose();
    await updating.dispose();
  });
  // 0023's perdure_commit_step is 0017's with another claim: it goes too.
  const without0017 = postgresMigrations.filter((migration) => migration !== commitStepAttributeWritesMigration && migration !== leanerClaimsAndCommitsMigration);
  assert.equal(without0017.length, postgresMigrations.length - 2);
  await applyMigrations(client, upserting.schema, pg.escapeIdentifier(upserting.schema), without0017);
  await applyMigrations(client, updating.schema, pg.escapeIdentifier(updating.schema));
  const before = await commitAll(client, upserting.schema);
  const after = await commitAll(client, updating.schema);
  assert.deepEqual(after.outcomes, ["committed", "committed", "committed"]);
  assert.deepEqual(before.outcomes, after.outcomes);
  const rows = await attributesOf(client, updating.schema);
  assert.deepEqual(rows, await attributesOf(client, upserting.schema));
  assert.deepEqual(rows, [
    { name: "Log", key: "a", value: "again" },
    { name: "Log", key: "b", value: "second" },
    { name: "Log", key: "c", value: "two" },
    { name: "State", key: "", value: "{\"turn\":1}" },
    { name: "Usage", key: "", value: "2" },
  ]);
  // 0011 wrote State again in the second commit; 0017 leaves the first version.
  assert.equal(new Set(before.versions).size, 2);
  assert.equal(new Set(after.versions).size, 1);
});
