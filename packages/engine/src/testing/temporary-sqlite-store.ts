import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore, type SqliteStoreOptions } from "../sqlite/sqlite-store.ts";

/** A SQLite store in a fresh temporary folder, removed by `dispose()`. */
export interface TemporarySqliteStore {
  store: SqliteStore;
  /** Path of the database file, for other processes to open. */
  path: string;
  /** Opens another store on the same file; in this process it shares the first one's connection. */
  reopen(options?: Partial<SqliteStoreOptions>): SqliteStore;
  dispose(): Promise<void>;
}

/**
 * Opens a real SQLite file in a temporary folder, `process-crash-safe` by default.
 *
 * @example
 * const temporary = createTemporarySqliteStore();
 * after(() => temporary.dispose());
 */
export function createTemporarySqliteStore(options: Partial<SqliteStoreOptions> = {}): TemporarySqliteStore {
  const folder = mkdtempSync(join(tmpdir(), "perdure-test-"));
  const path = join(folder, "engine.db");
  const opened: SqliteStore[] = [];
  const open = (overrides: Partial<SqliteStoreOptions> = {}): SqliteStore => {
    const store = SqliteStore.open({ durability: "process-crash-safe", pollIntervalMs: 20, ...options, ...overrides, path });
    opened.push(store);
    return store;
  };
  const store = open();
  return {
    store,
    path,
    reopen: open,
    dispose: async () => {
      for (const each of opened) await each.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
