/**
 * One SQLite connection per database file per process, shared by every
 * `SqliteStore` opened on that file. Two connections in one process would
 * stall each other: `BEGIN IMMEDIATE` waits synchronously for the write
 * lock, on the very thread that would finish the other connection's
 * transaction. Sharing also lets one store's commits wake Workers of the
 * others at once.
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { realpathSync } from "node:fs";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { WakeEvent } from "../store/store.ts";
import { preparePrivateDatabaseFile } from "./private-database-file.ts";
import { sqliteSchema } from "./schema.ts";

/** How hard a commit is pushed to disk. */
export type SqliteDurability = "full" | "process-crash-safe";

/** What a connection is opened with; stores sharing it must agree. */
export interface SqliteConnectionSettings {
  path: string;
  durability: SqliteDurability;
  busyTimeoutMs: number;
}

const connections = new Map<string, SqliteConnection>();

/** The process's connection to one database file, counted by the stores that use it. */
export class SqliteConnection {
  readonly path: string;
  readonly settings: SqliteConnectionSettings;
  readonly events = new EventEmitter();
  private readonly database: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly key: string;
  private queue: Promise<unknown> = Promise.resolve();
  private users = 0;
  private secret: Buffer | undefined;

  private constructor(settings: SqliteConnectionSettings, key: string) {
    this.settings = settings;
    this.path = settings.path;
    this.key = key;
    this.database = new DatabaseSync(settings.path, { timeout: settings.busyTimeoutMs });
    this.database.exec("PRAGMA journal_mode = WAL");
    this.database.exec(`PRAGMA synchronous = ${settings.durability === "full" ? "FULL" : "NORMAL"}`);
    this.database.exec("PRAGMA foreign_keys = OFF");
    // Checkpoint less often than the default 1000 pages: every Step rewrites a few pages, and
    // checkpoints were about half of commit time. The WAL is truncated back after each checkpoint.
    this.database.exec("PRAGMA wal_autocheckpoint = 4000");
    this.database.exec("PRAGMA journal_size_limit = 67108864");
    this.database.exec("PRAGMA cache_size = -32768");
    this.database.exec("BEGIN IMMEDIATE");
    try {
      this.database.exec(sqliteSchema);
      // The resume-token secret exists from the start, so that no read ever has to write it.
      this.database.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('token_secret', ?)").run(randomBytes(32));
      this.database.exec("COMMIT");
    } catch (error) {
      this.database.exec("ROLLBACK");
      this.database.close();
      throw error;
    }
    this.events.setMaxListeners(0);
  }

  /**
   * The connection to `settings.path`, opened (and the file created) when
   * this process has none yet. A store that asks for other durability or
   * busy timeout than the open connection has is refused: the two settings
   * belong to the connection, not to a store.
   */
  static acquire(settings: SqliteConnectionSettings): SqliteConnection {
    preparePrivateDatabaseFile(settings.path);
    const key = realpathSync(settings.path);
    let connection = connections.get(key);
    if (connection === undefined) {
      connection = new SqliteConnection(settings, key);
      connections.set(key, connection);
    } else if (connection.settings.durability !== settings.durability || connection.settings.busyTimeoutMs !== settings.busyTimeoutMs) {
      throw new InvalidInputError(
        `SQLite store ${settings.path} is already open in this process with durability ${JSON.stringify(connection.settings.durability)} and busyTimeoutMs ${connection.settings.busyTimeoutMs}; `
        + `open it with the same settings (stores on one file in one process share its connection)`,
      );
    }
    connection.users += 1;
    return connection;
  }

  /** Gives the connection back; the last store to leave closes it, after its queued transactions. */
  async release(): Promise<void> {
    this.users -= 1;
    if (this.users > 0) return;
    connections.delete(this.key);
    await this.queue;
    this.database.close();
  }

  /** A cached prepared statement. */
  statement(sql: string): StatementSync {
    let prepared = this.statements.get(sql);
    if (prepared === undefined) {
      prepared = this.database.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  run(sql: string, ...parameters: SQLInputValue[]): number {
    return Number(this.statement(sql).run(...parameters).changes);
  }

  /**
   * Runs `work` in one `BEGIN IMMEDIATE` transaction. The process's
   * transactions queue here; other processes are serialized by SQLite's
   * write lock.
   */
  transaction<TResult>(work: () => Promise<TResult>): Promise<TResult> {
    const result = this.queue.then(async () => {
      this.database.exec("BEGIN IMMEDIATE");
      try {
        const value = await work();
        this.database.exec("COMMIT");
        return value;
      } catch (error) {
        if (this.database.isTransaction) this.database.exec("ROLLBACK");
        throw error;
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  wake(event: WakeEvent): void {
    this.events.emit("wake", event);
  }

  /** The resume-token secret, read once. */
  async tokenSecret(): Promise<Buffer> {
    if (this.secret !== undefined) return this.secret;
    const row = await this.transaction(async () => this.statement("SELECT value FROM meta WHERE key = 'token_secret'").get() as { value: Uint8Array } | undefined);
    if (row === undefined) throw new Error(`the token secret of the SQLite store at ${this.path} vanished`);
    this.secret = Buffer.from(row.value);
    return this.secret;
  }
}
