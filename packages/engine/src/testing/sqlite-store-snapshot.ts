/**
 * Every row of a SQLite store file, to prove that a call changed nothing:
 * refused RPCs, reads, and requests a server turned away.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";

/** Each table's rows as sorted JSON texts. */
export type SqliteStoreSnapshot = Record<string, string[]>;

/**
 * Reads every row of every table but `workers` (a running Worker refreshes
 * its liveness there) through a read-only connection of its own.
 *
 * @example
 * const before = snapshotSqliteStore(path);
 * assert.equal(await client.invokeRPC(flow.resolveInterrupt, id, { interruptId: "nope", approved: true }), false);
 * assertSqliteStoreUnchanged(path, before, "resolving an unknown interrupt");
 */
export function snapshotSqliteStore(databasePath: string): SqliteStoreSnapshot {
  const database = new DatabaseSync(databasePath, { readOnly: true });
  try {
    const tables = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'workers' ORDER BY name").all() as { name: string }[];
    const snapshot: SqliteStoreSnapshot = {};
    // Some tables have no rowid: sort the rows' JSON instead.
    for (const { name } of tables) snapshot[name] = database.prepare(`SELECT * FROM "${name}"`).all().map((row) => JSON.stringify(row)).sort();
    return snapshot;
  } finally {
    database.close();
  }
}

/** Throws an `AssertionError` listing the rows that appeared (`+`) or went away (`-`) since `before`. */
export function assertSqliteStoreUnchanged(databasePath: string, before: SqliteStoreSnapshot, what: string): void {
  const after = snapshotSqliteStore(databasePath);
  const changes: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const old = new Set(before[table] ?? []);
    const now = new Set(after[table] ?? []);
    for (const row of now) if (!old.has(row)) changes.push(`+ ${table} ${row}`);
    for (const row of old) if (!now.has(row)) changes.push(`- ${table} ${row}`);
  }
  assert.deepEqual(changes, [], `${what} changed the store`);
}
