import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { StoreClosedError } from "../errors/store-closed-error.ts";
import type { Store, StoreTransaction, WakeEvent } from "../store/store.ts";
import { preparePrivateDatabaseFile } from "./private-database-file.ts";
import { sqliteSchema } from "./schema.ts";
import { SqliteTransaction } from "./sqlite-transaction.ts";

/** How hard a commit is pushed to disk. */
export type SqliteDurability = "full" | "process-crash-safe";

/** Options of {@link SqliteStore.open}. */
export interface SqliteStoreOptions {
  /**
   * Path of the database file. A missing file is created readable by its
   * owner only (0600), and missing folders 0700, whatever the umask.
   */
  path: string;
  /**
   * `full` fsyncs every commit (survives a power cut); `process-crash-safe`
   * survives a killed process but not a power cut, and is much faster.
   * @default "full"
   */
  durability?: SqliteDurability;
  /**
   * Largest encoded value a commit accepts.
   * @default 16_777_216 (16 MiB)
   */
  maxValueBytes?: number;
  /**
   * How often Workers look for work committed by other processes.
   * @default 100
   */
  pollIntervalMs?: number;
  /**
   * How long a transaction waits for another process's write lock.
   * @default 10_000
   */
  busyTimeoutMs?: number;
}

interface ResolvedSqliteStoreOptions {
  path: string;
  durability: SqliteDurability;
  maxValueBytes: number;
  pollIntervalMs: number;
  busyTimeoutMs: number;
}

function resolveSqliteStoreOptions(options: SqliteStoreOptions): ResolvedSqliteStoreOptions {
  if (typeof options.path !== "string" || options.path.length === 0) {
    throw new InvalidInputError(`SQLite store path ${JSON.stringify(options.path)} is invalid: give a file path`);
  }
  const durability = options.durability ?? "full";
  if (durability !== "full" && durability !== "process-crash-safe") {
    throw new InvalidInputError(`SQLite durability ${JSON.stringify(durability)} is invalid: use "full" or "process-crash-safe"`);
  }
  const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
    const resolved = value ?? fallback;
    if (!Number.isSafeInteger(resolved) || resolved <= 0) {
      throw new InvalidInputError(`SQLite store option ${name} ${String(value)} is invalid: use a positive integer`);
    }
    return resolved;
  };
  return {
    path: options.path,
    durability,
    maxValueBytes: positiveInteger("maxValueBytes", options.maxValueBytes, 16 * 1024 * 1024),
    pollIntervalMs: positiveInteger("pollIntervalMs", options.pollIntervalMs, 100),
    busyTimeoutMs: positiveInteger("busyTimeoutMs", options.busyTimeoutMs, 10_000),
  };
}

/**
 * The embedded store: one SQLite file in WAL mode through Node's built-in
 * `node:sqlite`. Any number of Workers and Clients in any number of processes
 * on one machine may open the same file.
 *
 * @example
 * const store = SqliteStore.open({ path: ".perdure/dev.db", durability: "process-crash-safe" });
 */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly maxValueBytes: number;
  readonly pollIntervalMs: number;
  readonly path: string;
  private readonly database: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly events = new EventEmitter();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private secret: Buffer | undefined;

  private constructor(options: ResolvedSqliteStoreOptions) {
    this.maxValueBytes = options.maxValueBytes;
    this.pollIntervalMs = options.pollIntervalMs;
    this.path = options.path;
    preparePrivateDatabaseFile(options.path);
    this.database = new DatabaseSync(options.path, { timeout: options.busyTimeoutMs });
    this.database.exec("PRAGMA journal_mode = WAL");
    this.database.exec(`PRAGMA synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
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
      throw error;
    }
    this.events.setMaxListeners(0);
  }

  /** Opens (and creates when missing) the database file. */
  static open(options: SqliteStoreOptions): SqliteStore {
    return new SqliteStore(resolveSqliteStoreOptions(options));
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

  transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    // One connection serves the whole process, so transactions queue here;
    // other processes are serialized by SQLite's write lock.
    const result = this.queue.then(() => this.runTransaction(work));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async runTransaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    if (this.closed) throw new StoreClosedError(`the SQLite store at ${this.path} is closed`);
    this.database.exec("BEGIN IMMEDIATE");
    try {
      const result = await work(new SqliteTransaction(this));
      this.database.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.database.isTransaction) this.database.exec("ROLLBACK");
      throw error;
    }
  }

  wake(event: WakeEvent): void {
    this.events.emit("wake", event);
  }

  subscribe(listener: (event: WakeEvent) => void): () => void {
    this.events.on("wake", listener);
    return () => this.events.off("wake", listener);
  }

  async tokenSecret(): Promise<Buffer> {
    if (this.secret !== undefined) return this.secret;
    const row = await this.transaction(async () => this.statement("SELECT value FROM meta WHERE key = 'token_secret'").get() as { value: Uint8Array } | undefined);
    if (row === undefined) throw new Error(`the token secret of the SQLite store at ${this.path} vanished`);
    this.secret = Buffer.from(row.value);
    return this.secret;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    this.database.close();
  }
}
