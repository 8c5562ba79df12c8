/**
 * Migration 0023's `perdure_commit_step` runs its finishing and publishing
 * checks, and its publishes loop, only for a commit that finishes the Flow
 * or publishes (0017 ran each as a statement in every commit). It falls
 * back, and commits, exactly where 0017 does.
 * docs/decisions/2026-12-07-leaner-claims-and-commits.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";
import { schemasAround0023 } from "./test-fixtures/schemas-around-0023.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const conditions = JSON.stringify({ mode: "any_of", items: [{ kind: "channel", name: "Inbox", key: "", bound: "at_least", count: 1 }] });

/** Each case: the Flow's other execution (besides the committing one, '1'), and what the commit does. */
const cases: { flowId: string; other: { status: string; conditions: string | null; movementOptions: string | null } | null; commit: Record<string, unknown> }[] = [
  // Finishes the Flow beside another execution: the general path cancels it.
  { flowId: "finish-beside", other: { status: "waiting", conditions, movementOptions: null }, commit: { finish: { status: "completed", output: "\"x\"", error: null } } },
  { flowId: "finish-alone", other: null, commit: { finish: { status: "completed", output: "\"x\"", error: null } } },
  // Publishes to a wait whose retry window depends on its movement options: the general path matches it.
  { flowId: "publish-to-options", other: { status: "waiting", conditions, movementOptions: "{\"timeoutMs\":5}" }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "publish-to-wait", other: { status: "waiting", conditions, movementOptions: null }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "neither", other: { status: "waiting", conditions, movementOptions: null }, commit: {} },
];

async function commitAll(client: pg.Client, schema: string): Promise<{ outcomes: string[]; rows: unknown[] }> {
  const quoted = pg.escapeIdentifier(schema);
  const outcomes: string[] = [];
  for (const { flowId, other, commit } of cases) {
    await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ($1, 'T', 'running', 'null', 0, 0, 10)`, [flowId]);
    await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token, lease_expires_at,
        deadline_at, available_at, attempt, execute_claims, scheduled_at, created_at) VALUES ($1, '1', 1, 'T', 'S', 'null', 'ready', 'w', 1, 1000, 1000, 0, 1, 1, 0, 0)`, [flowId]);
    if (other !== null) {
      await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, lease_token, available_at, attempt,
          execute_claims, scheduled_at, conditions, movement_options, created_at) VALUES ($1, '2', 2, 'T', 'S', 'null', $2, 0, 0, 0, 0, 0, $3, $4, 0)`,
      [flowId, other.status, other.conditions, other.movementOptions]);
    }
    const { rows } = await client.query<{ reply: { outcome: string } }>(`SELECT ${quoted}.perdure_commit_step($1::jsonb, '{}'::jsonb) AS reply`, [JSON.stringify({
      flowId, executionId: "1", workerId: "w", leaseToken: 1, method: "execute", now: 20, startedAt: 5,
      writes: [], movements: [], finish: null, ready: null, outcome: "{\"kind\":\"complete\"}", historyKeep: 0, holdsLocks: false, claim: null, handover: null,
      ...commit,
    })]);
    outcomes.push(rows[0]!.reply.outcome);
  }
  const rows = (await client.query(`SELECT f.flow_id, f.status, f.next_seq,
      (SELECT jsonb_agg(jsonb_build_array(e.execution_id, e.status, e.wait_result) ORDER BY e.seq) FROM ${quoted}.executions e WHERE e.flow_id = f.flow_id) AS executions,
      (SELECT jsonb_agg(jsonb_build_array(m.seq, m.channel, m.value) ORDER BY m.seq) FROM ${quoted}.messages m WHERE m.flow_id = f.flow_id) AS messages
    FROM ${quoted}.flows f ORDER BY f.flow_id`)).rows;
  return { outcomes, rows };
}

void test("perdure_commit_step with 0023 falls back and commits where 0017's does, for commits that finish, publish or do neither", { skip }, async (t) => {
  const { client, before, after } = await schemasAround0023(t);
  const old = await commitAll(client, before);
  const now = await commitAll(client, after);
  assert.deepEqual(now.outcomes, ["fallback", "committed", "fallback", "committed", "committed"]);
  assert.deepEqual(now.outcomes, old.outcomes);
  assert.deepEqual(now.rows, old.rows);
  const published = (now.rows as { flow_id: string; messages: unknown; executions: [string, string, string | null][] }[]).find((row) => row.flow_id === "publish-to-wait");
  // The publish readied the wait, which consumed the message.
  assert.deepEqual(published?.executions.map(([id, status]) => [id, status]), [["2", "ready"]]);
  assert.equal(published?.messages, null);
});
