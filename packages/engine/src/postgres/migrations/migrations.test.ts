import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { PostgresStore } from "../runtime/postgres-store.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../temporary-postgres-schema.ts";
import { applyMigrations, postgresMigrations } from "./migrations.ts";
import { genericPlanFunctions } from "./0012-commit-functions-generic-plans.ts";
import { appendStreamsSignature } from "./0013-append-streams.ts";
import { Client } from "../../client/client.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import { pollUntil } from "../../testing/poll-until.ts";
import { Worker } from "../../worker/worker.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

void test("eight stores opening a fresh schema at once apply each migration exactly once", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const stores = await Promise.all(Array.from({ length: 8 }, () => temporary.open({ poolSize: 1 })));
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  let applied: string[];
  try {
    applied = (await client.query<{ name: string }>(`SELECT name FROM ${pg.escapeIdentifier(temporary.schema)}.schema_migrations ORDER BY name`)).rows.map((row) => row.name);
  } finally {
    await client.end();
  }
  assert.deepEqual(applied, postgresMigrations.map((migration) => migration.name));
  // Every store shares one token secret.
  const secrets = await Promise.all(stores.map((store) => store.tokenSecret()));
  for (const secret of secrets) assert.ok(secret.equals(secrets[0]!));
  assert.deepEqual(await PostgresStore.migrate({ connectionString: temporary.connectionString, schema: temporary.schema }), []);
});

void test("a schema migrated by a newer engine is refused with an error naming the unknown migration", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  await temporary.open();
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  try {
    await client.query(`INSERT INTO ${pg.escapeIdentifier(temporary.schema)}.schema_migrations (name) VALUES ('9999_from_the_future')`);
  } finally {
    await client.end();
  }
  await assert.rejects(temporary.open(), /9999_from_the_future.*upgrade @perdure\/engine/);
});

void test("a schema of the previous version (migration 0001 only) with a Flow mid-run gets the one-request functions on open, and the Flow finishes on them", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const setup = new pg.Client({ connectionString: temporary.connectionString });
  await setup.connect();
  try {
    assert.deepEqual(await applyMigrations(setup, temporary.schema, pg.escapeIdentifier(temporary.schema), postgresMigrations.slice(0, 1)), ["0001_initial"]);
  } finally {
    await setup.end();
  }
  const ChainStep = defineStep<{ remaining: number }>("Chain", {
    execute: (_context, input) => (input.remaining > 0 ? moveTo("Chain", { remaining: input.remaining - 1 }) : completeFlow({ done: true })),
  });
  const chainFlow = defineFlow({ type: "UpgradeChain", start: "Chain", steps: [ChainStep] });
  // The old schema, as a process of the previous version sees it: no functions, so everything runs as transactions.
  const old = await temporary.open({ migrate: false });
  assert.equal(old.oneRequest, undefined);
  await new Client({ store: old }).start(chainFlow, "upgraded", { remaining: 4 });
  const oldWorker = new Worker({ store: old, flows: [chainFlow] });
  await oldWorker.start();
  await pollUntil(async () => (await new Client({ store: old }).getStepHistory("upgraded")).length >= 2, { timeoutMs: 20_000, description: "two Steps on the old schema" });
  await oldWorker.close();
  await old.close();

  const upgraded = await temporary.open();
  assert.ok(upgraded.oneRequest !== undefined, "opening applied migration 0002");
  const worker = new Worker({ store: upgraded, flows: [chainFlow] });
  await worker.start();
  const client = new Client({ store: upgraded });
  try {
    await pollUntil(async () => (await client.describe("upgraded")).status === "completed", { timeoutMs: 20_000, description: "the Flow to finish after the upgrade" });
  } finally {
    await worker.close();
  }
  const history = await client.getStepHistory("upgraded");
  assert.deepEqual(history.map((entry) => [entry.stepType, entry.status]), Array.from({ length: 5 }, () => ["Chain", "completed"]));
  assert.deepEqual((await client.describe("upgraded")).output, { done: true });
});

void test("a store on a schema without migration 0003 (migrate: false) runs on 0002's commit function: Flows finish and waitForFlow reads their end", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const setup = new pg.Client({ connectionString: temporary.connectionString });
  await setup.connect();
  try {
    assert.deepEqual(
      await applyMigrations(setup, temporary.schema, pg.escapeIdentifier(temporary.schema), postgresMigrations.slice(0, 2)),
      ["0001_initial", "0002_one_trip_functions"],
    );
  } finally {
    await setup.end();
  }
  const ChainStep = defineStep<{ remaining: number }>("Chain", {
    execute: (_context, input) => (input.remaining > 0 ? moveTo("Chain", { remaining: input.remaining - 1 }) : completeFlow({ done: true })),
  });
  const chainFlow = defineFlow({ type: "Before0003", start: "Chain", steps: [ChainStep] });
  const store = await temporary.open({ migrate: false });
  assert.ok(store.oneRequest !== undefined, "0002's functions are there");
  const worker = new Worker({ store, flows: [chainFlow] });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });
  await client.start(chainFlow, "before-0003", { remaining: 3 });
  const ended = await client.waitForFlow("before-0003", { timeoutMs: 60_000 });
  assert.deepEqual([ended.status, ended.output, ended.input], ["completed", { done: true }, { remaining: 3 }]);
  assert.equal((await client.getStepHistory("before-0003")).length, 4);
  await worker.close();
});

void test("the commit-side functions plan generically and the claim function keeps the server's default, after every migration", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  await temporary.open({ poolSize: 1 });
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  let rows: { signature: string; config: string[] | null }[];
  try {
    rows = (
      await client.query<{ signature: string; config: string[] | null }>(
        `SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')' AS signature, p.proconfig AS config
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
        [temporary.schema],
      )
    ).rows;
  } finally {
    await client.end();
  }
  const settings = new Map(rows.map((row) => [row.signature, row.config]));
  // A later CREATE OR REPLACE of one of these functions drops the setting unless it repeats it.
  const commitStreamsSignatures = [
    "perdure_write_stream_messages(text, text, text[], text[], bigint[], bigint[])",
    "perdure_count_stream_bytes(text[], text[], bigint[], bigint[])",
    "perdure_write_commit_streams(jsonb)",
    "perdure_commit_step_streams(jsonb, jsonb)",
    "perdure_commit_steps_streams(jsonb, jsonb)",
    "perdure_publish_rpc_waking(jsonb, text, text)",
    "perdure_write_streams(text, text, text[], text[], bigint[], bigint[], bigint[])",
    "perdure_heartbeat_streams(text, text, text, bigint, bigint, bigint, text, text, text[], text[], bigint[], bigint[], bigint[], text[], text[])",
  ];
  for (const signature of [...genericPlanFunctions, appendStreamsSignature, ...commitStreamsSignatures]) assert.deepEqual(settings.get(signature), ["plan_cache_mode=force_generic_plan"], signature);
  assert.equal(settings.get("perdure_claim_plain(text, text[], jsonb, integer, bigint)"), null);
  assert.equal(settings.get("perdure_claim_compact(text, text[], jsonb, integer, bigint)"), null);
});
