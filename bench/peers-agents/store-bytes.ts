/**
 * What each system stores, in bytes on disk: the files of a folder, or the
 * tables, indexes and TOAST of a PostgreSQL schema (dead rows and free
 * pages included, as a disk holds them).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

export function directoryBytes(folder: string): number {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

export async function withClient<T>(connectionString: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Bytes of every table, index and TOAST relation in `schema`. */
export async function schemaBytes(connectionString: string, schema: string): Promise<number> {
  return withClient(connectionString, async (client) => {
    const result = await client.query<{ bytes: string | null }>(
      "SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')",
      [schema],
    );
    return Number(result.rows[0]?.bytes ?? 0);
  });
}
