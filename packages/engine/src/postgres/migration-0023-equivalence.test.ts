/**
 * Migration 0023 against what it replaced: differential checks of
 * `perdure_claim_compact` against 0019's `perdure_claim_plain`,
 * `perdure_match_wait` and `perdure_commit_step` against the schema
 * without 0023, over shapes compact-claims.test.ts does not cover (from
 * the review of 0023, rev2).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { applyMigrations } from "./migrations/migrations.ts";
import { compactClaimColumns, leanerClaimsAndCommitsMigration } from "./migrations/0023-leaner-claims-and-commits.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";
import { migrationsWithout0023, schemasAround0023 } from "./test-fixtures/schemas-around-0023.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const big = "\"" + "x".repeat(300_000) + "\"";
const odd = String.raw`{"a":"\u0000","b":"\ud800","c":"é\n\t\"","k\u0000":1}`;

/** Flows with tasks of every catalog-entry shape the claim distinguishes. */
async function seedClaims(client: pg.Client, quoted: string): Promise<void> {
  const flows = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"];
  for (const flow of flows) {
    await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ($1, 'T', 'running', 'null', 0, 0, 10)`, [flow]);
    await client.query(`INSERT INTO ${quoted}.attributes (flow_id, name, key, value) VALUES ($1, 'State', '', $2), ($1, 'Log', '0001', '"one"')`, [flow, flow === "c" ? big : odd]);
  }
  await client.query(`INSERT INTO ${quoted}.messages (flow_id, seq, channel, key, message_id, value, published_at) VALUES ('b', 1, 'Inbox', 'k', '000000000001-5', $1, 5)`, [odd]);
  // [flow, execution, step, status, available, input, movement options, lease token]
  const rows: [string, string, string, string, number, string | null, string | null, string][] = [
    ["a", "1", "Locked", "ready", 1, odd, null, "9007199254740993"],
    ["b", "2", "EmptyLoads", "ready", 2, big, "{\"load\":[{\"kind\":\"channel\",\"name\":\"Inbox\",\"key\":\"k\"}]}", "0"],
    ["c", "3", "EmptyLoads", "asking", 3, "null", null, "1"],
    ["d", "4", "NoLocks", "ready", 4, "\"\"", "{\"load\":[]}", "2"],
    ["e", "5", "Locked", "ready", 5, "1", null, "3"],
    ["e", "6", "Locked", "asking", 5, "2", null, "3"],
    ["f", "7", "NullEntry4", "ready", 6, "3", "{\"load\":[]}", "4"],
    ["g", "8", "NoLocks", "ready", 7, "4", String.raw`{"load":[],"x":"\u0000"}`, "5"],
    ["h", "9", "NoLocks", "ready", 8, "5", null, "6"],
    ["i", "10", "Missing", "ready", 9, "6", null, "7"],
    ["j", "11", "NoLocks", "ready", 10, "7", null, "8"],
    ["k", "12", "NoLocks", "ready", 11, "8", String.raw`{"load":[],"x":"\ud800"}`, "9"],
  ];
  for (const [flow, execution, step, status, available, input, options, token] of rows) {
    await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, lease_token, available_at, attempt,
        execute_claims, scheduled_at, movement_options, created_at, checkpoint, last_error) VALUES ($1, $2, $10::bigint, 'T', $3, $4, $5, $6::bigint, $7, 0, 0, $7, $8, 0, $9, NULL)`,
    [flow, execution, step, input, status, token, available, options, execution === "1" ? big : null, Number(execution)]);
  }
  // A lock another execution holds: the Locked task of Flow e is passed over.
  await client.query(`INSERT INTO ${quoted}.locks (flow_id, name, execution_id) VALUES ('e', 'Writer', '99')`);
}

const catalog = JSON.stringify({
  "T Locked ready": [60_000, 5_000, ["Writer", "Other"], true, [{ kind: "range", name: "Log", fromKey: "", toKey: null, limit: 10 }, { kind: "instance", name: "State", key: "" }]],
  "T Locked asking": [60_000, null, ["Writer"], false, null],
  "T EmptyLoads ready": [30_000, null, [], true, []],
  "T EmptyLoads asking": [30_000, null, "notalist", false, []],
  "T NoLocks ready": [30_000, 10, [], true, null],
  "T NullEntry4 ready": [30_000, null, null, true],
});

interface KeyedReply { claims: { execution: Record<string, unknown>; attributes: unknown; loaded?: unknown }[]; stopped: boolean; skipped: boolean; more: boolean }
interface CompactReply { claims: [unknown[], unknown, unknown][]; stopped: boolean; skipped: boolean; more: boolean }

async function claimRolledBack<TReply>(client: pg.Client, quoted: string, claimFunction: string, limit: number, now: number): Promise<{ reply: TReply; state: unknown }> {
  await client.query("BEGIN");
  try {
    const { rows } = await client.query<{ reply: TReply }>(`SELECT ${quoted}.${claimFunction}('w', ARRAY['T'], $1::jsonb, $2, $3) AS reply`, [catalog, limit, now]);
    const state: unknown = (await client.query(`SELECT (SELECT jsonb_agg(to_jsonb(l) ORDER BY l.flow_id, l.name) FROM ${quoted}.locks l) AS locks,
      (SELECT jsonb_agg(to_jsonb(e) ORDER BY e.flow_id, e.execution_id) FROM ${quoted}.executions e) AS executions`)).rows[0];
    return { reply: rows[0]!.reply, state };
  } finally {
    await client.query("ROLLBACK");
  }
}

void test("the compact claim equals 0019's for every entry shape, limit, time and a Flow another session holds", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: temporary.connectionString });
  const holder = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  await holder.connect();
  t.after(async () => {
    await holder.end();
    await client.end();
    await temporary.dispose();
  });
  const quoted = pg.escapeIdentifier(temporary.schema);
  await applyMigrations(client, temporary.schema, quoted);
  await seedClaims(client, quoted);
  const compared = [];
  for (const hold of [false, true]) {
    if (hold) {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${quoted}.flows WHERE flow_id IN ('d', 'h') FOR UPDATE`);
    }
    for (const limit of [0, 1, 2, 3, 5, 20]) {
      for (const now of [0, 1, 4, 7, 100]) {
        const keyed = await claimRolledBack<KeyedReply>(client, quoted, "perdure_claim_plain", limit, now);
        const compact = await claimRolledBack<CompactReply>(client, quoted, "perdure_claim_compact", limit, now);
        const label = `hold ${hold} limit ${limit} now ${now}`;
        assert.deepEqual(compact.state, keyed.state, label);
        assert.deepEqual([compact.reply.stopped, compact.reply.skipped, compact.reply.more], [keyed.reply.stopped, keyed.reply.skipped, keyed.reply.more], label);
        assert.equal(compact.reply.claims.length, keyed.reply.claims.length, label);
        for (const [index, [values, attributes, loaded]] of compact.reply.claims.entries()) {
          const other = keyed.reply.claims[index]!;
          assert.deepEqual(Object.fromEntries(compactClaimColumns.map((column, position) => [column, values[position]])), other.execution, label);
          assert.deepEqual(attributes, other.attributes, label);
          assert.deepEqual(loaded, other.loaded ?? null, label);
        }
        compared.push([label, keyed.reply.claims.length, keyed.reply.stopped, keyed.reply.skipped, keyed.reply.more]);
      }
    }
    if (hold) await holder.query("ROLLBACK");
  }
  // Coverage: some claims took tasks, some stopped, some skipped.
  assert.ok(compared.some(([, n]) => (n as number) > 1));
  assert.ok(compared.some(([, , stopped]) => stopped === true));
  assert.ok(compared.some(([, , , skipped]) => skipped === true));
});

/** Waits of every Timer shape, and what perdure_match_wait does with each. */
const waits: { id: string; conditions: string; timers: [string, number, boolean][] }[] = [
  { id: "any-fired", conditions: JSON.stringify({ mode: "any_of", items: [{ kind: "channel", name: "Inbox", key: "", bound: "at_least", count: 1 }, { kind: "timer", timerId: "t1", dueAt: 50 }, { kind: "timer", timerId: "t2", dueAt: 5 }] }), timers: [["t1", 50, true], ["t2", 5, false]] },
  { id: "any-unfired", conditions: JSON.stringify({ mode: "any_of", items: [{ kind: "timer", timerId: "t1", dueAt: 50 }, { kind: "channel", name: "Inbox", key: "", bound: "at_least", count: 1 }] }), timers: [["t1", 50, false]] },
  { id: "any-unfired-nomsg", conditions: JSON.stringify({ mode: "any_of", items: [{ kind: "timer", timerId: "t1", dueAt: 50 }, { kind: "channel", name: "Other", key: "", bound: "at_least", count: 1 }] }), timers: [["t1", 50, false]] },
  { id: "any-empty", conditions: JSON.stringify({ mode: "any_of", items: [] }), timers: [] },
  { id: "all-empty", conditions: JSON.stringify({ mode: "all_of", items: [] }), timers: [] },
  { id: "all-fired", conditions: JSON.stringify({ mode: "all_of", items: [{ kind: "timer", timerId: "a\"b\\c.$[*]", dueAt: 50 }, { kind: "timer", timerId: "é\u2028", dueAt: 9 }] }), timers: [["a\"b\\c.$[*]", 50, true], ["é\u2028", 9, false]] },
  { id: "all-half", conditions: JSON.stringify({ mode: "all_of", items: [{ kind: "timer", timerId: "x", dueAt: 50 }, { kind: "timer", timerId: "y", dueAt: 50 }] }), timers: [["x", 50, true], ["y", 50, false]] },
  { id: "channel-only", conditions: JSON.stringify({ mode: "any_of", items: [{ kind: "channel", name: "timer", key: "kind", bound: "exactly", count: 1 }] }), timers: [] },
  { id: "timer-name-channel", conditions: JSON.stringify({ mode: "any_of", items: [{ kind: "channel", name: "Inbox", key: "", bound: "at_most", count: 2, timerId: "z" }] }), timers: [["z", 1, true]] },
  { id: "no-items", conditions: JSON.stringify({ mode: "any_of" }), timers: [["t", 1, true]] },
];

async function matchAll(client: pg.Client, schema: string): Promise<unknown> {
  const quoted = pg.escapeIdentifier(schema);
  const results: unknown[] = [];
  for (const wait of waits) {
    await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ($1, 'T', 'running', 'null', 0, 0, 10)`, [wait.id]);
    await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, lease_token, available_at, attempt,
        execute_claims, scheduled_at, conditions, created_at) VALUES ($1, '1', 1, 'T', 'S', 'null', 'waiting', 0, 0, 0, 0, 0, $2, 0)`, [wait.id, wait.conditions]);
    await client.query(`INSERT INTO ${quoted}.messages (flow_id, seq, channel, key, message_id, value, published_at) VALUES ($1, 2, 'Inbox', '', '000000000002-5', '"m"', 5)`, [wait.id]);
    for (const [timerId, dueAt, fired] of wait.timers) {
      await client.query(`INSERT INTO ${quoted}.timers (flow_id, flow_type, execution_id, timer_id, due_at, fired) VALUES ($1, 'T', '1', $2, $3, $4)`, [wait.id, timerId, dueAt, fired]);
    }
    const { rows } = await client.query<{ matched: number }>(`SELECT ${quoted}.perdure_match_wait($1, '1', $2::jsonb, 20, NULL, 20, 20) AS matched`, [wait.id, wait.conditions]);
    const state: unknown = (await client.query(`SELECT (SELECT jsonb_agg(jsonb_build_array(e.status, e.wait_result)) FROM ${quoted}.executions e WHERE e.flow_id = $1) AS e,
      (SELECT jsonb_agg(m.message_id) FROM ${quoted}.messages m WHERE m.flow_id = $1) AS m,
      (SELECT jsonb_agg(t.timer_id ORDER BY t.timer_id) FROM ${quoted}.timers t WHERE t.flow_id = $1) AS t`, [wait.id])).rows[0];
    results.push([wait.id, rows[0]!.matched, state]);
  }
  return results;
}

void test("perdure_match_wait with 0023 matches as 0015's for Timers fired, unfired and odd ids, no items, channel-only waits", { skip }, async (t) => {
  const { client, before, after } = await schemasAround0023(t);
  const old = await matchAll(client, before);
  const now = await matchAll(client, after);
  assert.deepEqual(now, old);
});

const waitConditions = JSON.stringify({ mode: "any_of", items: [{ kind: "channel", name: "Inbox", key: "", bound: "at_least", count: 1 }] });
const commits: { flowId: string; flowStatus?: string; other: { status: string; conditions: string | null; movementOptions: string | null; claimedBy?: string } | null; commit: Record<string, unknown> }[] = [
  { flowId: "nul-conditions", other: { status: "waiting", conditions: String.raw`{"mode":"any_of","items":[{"kind":"channel","name":"In\u0000box","key":"","bound":"at_least","count":1}]}`, movementOptions: null }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "surrogate-conditions", other: { status: "waiting", conditions: String.raw`{"mode":"any_of","items":[{"kind":"channel","name":"\ud800","key":"","bound":"at_least","count":1}]}`, movementOptions: null }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "no-ready-total", other: { status: "waiting", conditions: waitConditions, movementOptions: null }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: {} } },
  { flowId: "finish-and-publish-alone", other: null, commit: { finish: { status: "completed", output: "\"x\"", error: null }, publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "finish-beside-ready", other: { status: "ready", conditions: null, movementOptions: null }, commit: { finish: { status: "failed", output: null, error: "{\"m\":1}" } } },
  { flowId: "publish-beside-running", other: { status: "ready", conditions: null, movementOptions: null, claimedBy: "x" }, commit: { publishes: [["Inbox", "", "\"m\""], ["Other", "k", "\"n\""]], readyTotals: { S: 1000 } } },
  { flowId: "stopped-flow-publish", flowStatus: "stopped", other: { status: "waiting", conditions: waitConditions, movementOptions: null }, commit: { publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "stopped-flow-finish", flowStatus: "stopped", other: null, commit: { finish: { status: "completed", output: "\"x\"", error: null } } },
  { flowId: "fenced-publish", other: { status: "waiting", conditions: waitConditions, movementOptions: "{\"timeoutMs\":5}" }, commit: { leaseToken: 7, publishes: [["Inbox", "", "\"m\""]], readyTotals: { S: 1000 } } },
  { flowId: "empty-publishes-finish", other: null, commit: { publishes: [], finish: { status: "completed", output: "\"x\"", error: null } } },
  { flowId: "asking-expected", other: null, commit: { method: "waitUntil" } },
];

async function commitAll(client: pg.Client, schema: string): Promise<{ outcomes: unknown[]; rows: unknown[] }> {
  const quoted = pg.escapeIdentifier(schema);
  const outcomes: unknown[] = [];
  for (const { flowId, flowStatus, other, commit } of commits) {
    await client.query(`INSERT INTO ${quoted}.flows (flow_id, flow_type, status, input, created_at, updated_at, next_seq) VALUES ($1, 'T', $2, 'null', 0, 0, 10)`, [flowId, flowStatus ?? "running"]);
    await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token, lease_expires_at,
        deadline_at, available_at, attempt, execute_claims, scheduled_at, created_at) VALUES ($1, '1', 1, 'T', 'S', 'null', 'ready', 'w', 1, 1000, 1000, 0, 1, 1, 0, 0)`, [flowId]);
    if (other !== null) {
      await client.query(`INSERT INTO ${quoted}.executions (flow_id, execution_id, seq, flow_type, step_type, input, status, claimed_by, lease_token, available_at, attempt,
          execute_claims, scheduled_at, conditions, movement_options, created_at) VALUES ($1, '2', 2, 'T', 'S', 'null', $2, $5, 0, 0, 0, 0, 0, $3, $4, 0)`,
      [flowId, other.status, other.conditions, other.movementOptions, other.claimedBy ?? null]);
    }
    try {
      const { rows } = await client.query<{ reply: { outcome: string } }>(`SELECT ${quoted}.perdure_commit_step($1::jsonb, '{}'::jsonb) AS reply`, [JSON.stringify({
        flowId, executionId: "1", workerId: "w", leaseToken: 1, method: "execute", now: 20, startedAt: 5,
        writes: [], movements: [], finish: null, ready: null, outcome: "{\"kind\":\"complete\"}", historyKeep: 0, holdsLocks: false, claim: null, handover: null,
        compactClaims: true,
        ...commit,
      })]);
      outcomes.push([flowId, rows[0]!.reply]);
    } catch (error) {
      outcomes.push([flowId, "error", (error as Error).message.replace(/pg_temp\w*|perdure_test_\w+/g, "")]);
    }
  }
  const rows = (await client.query(`SELECT to_jsonb(f) AS flow,
      (SELECT jsonb_agg(to_jsonb(e) ORDER BY e.seq) FROM ${quoted}.executions e WHERE e.flow_id = f.flow_id) AS executions,
      (SELECT jsonb_agg(to_jsonb(m) ORDER BY m.seq) FROM ${quoted}.messages m WHERE m.flow_id = f.flow_id) AS messages
    FROM ${quoted}.flows f ORDER BY f.flow_id`)).rows;
  return { outcomes, rows };
}

void test("perdure_commit_step with 0023 answers and writes as 0017's for U+0000 / surrogate waits, stopped Flows, fenced, finish+publish", { skip }, async (t) => {
  const { client, before, after } = await schemasAround0023(t);
  const old = await commitAll(client, before);
  const now = await commitAll(client, after);
  assert.deepEqual(now.outcomes, old.outcomes);
  assert.deepEqual(now.rows, old.rows);
});

void test("re-running every migration on a 0023 schema applies nothing and changes no function", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await temporary.dispose();
  });
  const quoted = pg.escapeIdentifier(temporary.schema);
  await applyMigrations(client, temporary.schema, quoted, migrationsWithout0023);
  const settings = async () => (await client.query<{ f: string; proconfig: string[] | null; provolatile: string }>(`SELECT p.oid::regprocedure::text AS f, p.proconfig, p.provolatile FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 ORDER BY 1`, [temporary.schema])).rows.map((row) => ({ ...row, f: row.f.replace(/^[^.]*\./, "") }));
  const settingsBefore = await settings();
  assert.deepEqual(await applyMigrations(client, temporary.schema, quoted), [leanerClaimsAndCommitsMigration.name]);
  // Every function 0023 replaces keeps its settings; the new one has 0019's claim's.
  const settingsAfter = await settings();
  const claimPlain = settingsAfter.find((row) => row.f.startsWith("perdure_claim_plain("));
  assert.deepEqual(settingsAfter.filter((row) => !row.f.startsWith("perdure_claim_compact(")), settingsBefore);
  assert.deepEqual({ ...settingsAfter.find((row) => row.f.startsWith("perdure_claim_compact(")), f: "" }, { ...claimPlain, f: "" });
  const functions = async () => (await client.query<{ proname: string; proconfig: string[] | null; src: string }>(`SELECT p.proname, p.proconfig, md5(p.prosrc) AS src FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proname IN ('perdure_claim_compact', 'perdure_claim_plain', 'perdure_commit_step', 'perdure_match_wait', 'perdure_publish_rpc_claiming') ORDER BY 1, 3`, [temporary.schema])).rows;
  const first = await functions();
  assert.deepEqual(await applyMigrations(client, temporary.schema, quoted), []);
  // The SQL also runs again as is (CREATE OR REPLACE throughout).
  await client.query(leanerClaimsAndCommitsMigration.sql.replaceAll("{schema}", quoted));
  assert.deepEqual(await functions(), first);
});
