import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { PostgresStore } from "./postgres-store.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, testDatabaseUrl } from "./temporary-postgres-schema.ts";
import { postgresMigrations } from "./migrations.ts";

const url = testDatabaseUrl();
const inCi = process.env["CI"] !== undefined && process.env["CI"] !== "";
const skip = url === undefined && !inCi ? missingDatabaseMessage : false;

function requireUrl(): string {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  return url;
}

void test("eight stores opening a fresh schema at once apply each migration exactly once", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireUrl());
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
  const temporary = createTemporaryPostgresSchema(requireUrl());
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
