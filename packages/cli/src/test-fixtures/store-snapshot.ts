/**
 * Every row of a SQLite store, to prove that a request changed nothing.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";

/** Each table's rows as sorted JSON texts. */
export type StoreSnapshot = Record<string, string[]>;

/** Every row of every table but the Workers' liveness, which a running Worker refreshes. */
export function storeSnapshot(databasePath: string): StoreSnapshot {
  const database = new DatabaseSync(databasePath, { readOnly: true });
  try {
    const tables = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'workers' ORDER BY name").all() as { name: string }[];
    const snapshot: Record<string, string[]> = {};
    // Some tables have no rowid: sort the rows' JSON instead.
    for (const { name } of tables) snapshot[name] = database.prepare(`SELECT * FROM "${name}"`).all().map((row) => JSON.stringify(row)).sort();
    return snapshot;
  } finally {
    database.close();
  }
}

/** Fails naming the rows that appeared or went away since `before`. */
export function assertStoreUnchanged(databasePath: string, before: StoreSnapshot, what: string): void {
  const after = storeSnapshot(databasePath);
  const changes: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const old = new Set(before[table] ?? []);
    const now = new Set(after[table] ?? []);
    for (const row of now) if (!old.has(row)) changes.push(`+ ${table} ${row}`);
    for (const row of old) if (!now.has(row)) changes.push(`- ${table} ${row}`);
  }
  assert.deepEqual(changes, [], `${what} changed the store`);
}

