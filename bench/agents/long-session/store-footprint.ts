/**
 * How much disk a SQLite store takes while a session grows: the database
 * and WAL file sizes, and the pages each table uses (SQLite's `dbstat`),
 * read through a separate read-only connection so the store's own
 * connection and counters are untouched.
 */
import { existsSync, statSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { withoutRowCounting } from "./row-read-counter.ts";

/** One sample of the store's size. */
export interface StoreFootprint {
  /** The database file, in bytes. */
  databaseBytes: number;
  /** The write-ahead log, in bytes (it is reset, not shrunk, by checkpoints). */
  walBytes: number;
  /** Bytes of the pages in use by each table and its indexes, by table name. */
  tableBytes: Record<string, number>;
  /** Pages on the freelist, in bytes: deleted rows' space the file keeps for reuse. */
  freeBytes: number;
  /** The Streams' value bytes, which their byte budget caps (`stream_usage`, summed over Flow types and Streams). */
  streamValueBytes: number;
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** The table an index or autoindex belongs to, so each table's bytes include its indexes. */
function tableOf(database: DatabaseSync, objectName: string): string {
  const row = database.prepare("SELECT tbl_name FROM sqlite_schema WHERE name = ?").get(objectName) as { tbl_name?: string } | undefined;
  return row?.tbl_name ?? objectName.replace(/^sqlite_autoindex_(.+)_\d+$/, "$1");
}

/** Reads the sizes of the store at `path` (its `-wal` beside it). */
export function readStoreFootprint(path: string): StoreFootprint {
  return withoutRowCounting(() => {
    const database = new DatabaseSync(path, { readOnly: true });
    try {
      const tableBytes: Record<string, number> = {};
      for (const row of database.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as { name: string; bytes: number }[]) {
        const table = tableOf(database, row.name);
        tableBytes[table] = (tableBytes[table] ?? 0) + row.bytes;
      }
      const pageSize = (database.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
      const freePages = (database.prepare("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
      const streamValueBytes = (database.prepare("SELECT coalesce(sum(bytes), 0) AS bytes FROM stream_usage").get() as { bytes: number }).bytes;
      return { databaseBytes: fileSize(path), walBytes: fileSize(`${path}-wal`), tableBytes, freeBytes: freePages * pageSize, streamValueBytes };
    } finally {
      database.close();
    }
  });
}

/**
 * The same sample on PostgreSQL: each table of `schema` with its indexes and
 * TOAST (`pg_total_relation_size`, dead rows included until vacuum frees
 * them). The server's WAL is shared by every database, so it is not counted,
 * and free space is inside each table's bytes.
 */
export async function readPostgresStoreFootprint(connectionString: string, schema: string): Promise<StoreFootprint> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const tables = await client.query<{ name: string; bytes: string }>(
      "SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
      [schema],
    );
    const tableBytes = Object.fromEntries(tables.rows.map((row) => [row.name, Number(row.bytes)]));
    const usage = await client.query<{ bytes: string }>(`SELECT coalesce(sum(bytes), 0)::text AS bytes FROM ${pg.escapeIdentifier(schema)}.stream_usage`);
    return {
      databaseBytes: Object.values(tableBytes).reduce((sum, bytes) => sum + bytes, 0),
      walBytes: 0,
      tableBytes,
      freeBytes: 0,
      streamValueBytes: Number(usage.rows[0]?.bytes ?? 0),
    };
  } finally {
    await client.end();
  }
}
