/**
 * Two private schemas on the test server, one migrated without migration
 * 0023 and one with every migration, and a connection to both: what a test
 * comparing 0023's functions with those they replaced runs against. The
 * test's `after` drops both.
 */
import type { TestContext } from "node:test";
import pg from "pg";
import { leanerClaimsAndCommitsMigration } from "../migrations/0023-leaner-claims-and-commits.ts";
import { applyMigrations, postgresMigrations } from "../migrations/migrations.ts";
import { createTemporaryPostgresSchema, requireTestDatabaseUrl } from "../temporary-postgres-schema.ts";

export const migrationsWithout0023 = postgresMigrations.filter((migration) => migration !== leanerClaimsAndCommitsMigration);

export async function schemasAround0023(t: TestContext): Promise<{ client: pg.Client; before: string; after: string }> {
  const before = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const after = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const client = new pg.Client({ connectionString: before.connectionString });
  await client.connect();
  t.after(async () => {
    await client.end();
    await before.dispose();
    await after.dispose();
  });
  await applyMigrations(client, before.schema, pg.escapeIdentifier(before.schema), migrationsWithout0023);
  await applyMigrations(client, after.schema, pg.escapeIdentifier(after.schema));
  return { client, before: before.schema, after: after.schema };
}
