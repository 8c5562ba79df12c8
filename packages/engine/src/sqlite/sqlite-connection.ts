/**
 * One SQLite connection per database file per process, shared by every
 * `SqliteStore` opened on that file. Two connections in one process would
 * stall each other: `BEGIN IMMEDIATE` waits synchronously for the write
 * lock, on the very thread that would finish the other connection's
 * transaction. Sharing also lets one store's commits wake Workers of the
 * others at once.
 *
 * Transactions take turns on the connection, and each holds SQLite's write
 * lock only while the event loop cannot turn (see `transaction-run.ts`), so a
 * process paused at an await holds no lock that other processes wait for.
 * Transactions that queue while one runs share one SQLite transaction and one
 * COMMIT; under `full`, and under `process-crash-safe` after a turn's first
 * transaction, the connection waits for the end of the turn before it
 * starts, so that a turn's transactions gather (see `commit-group.ts`).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { realpathSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { WakeEvent } from "../store/store.ts";
import { PreparedStatement } from "./prepared-statement.ts";
import { preparePrivateDatabaseFile } from "./private-database-file.ts";
import { CommitGroup, type MemberSettled } from "./commit-group.ts";
import { sqliteSchema } from "./schema.ts";
import { SqliteTransactionConflict } from "./sqlite-transaction-conflict.ts";
import { asError, TransactionRun, type TransactionHost, type TransactionStatements } from "./transaction-run.ts";

/** How hard a commit is pushed to disk. */
export type SqliteDurability = "full" | "process-crash-safe";

/** What a connection is opened with; stores sharing it must agree. */
export interface SqliteConnectionSettings {
  path: string;
  durability: SqliteDurability;
  busyTimeoutMs: number;
}

const connections = new Map<string, SqliteConnection>();

/**
 * How many times a transaction's work runs before a conflict is given to the
 * caller. Only work that waits on something other than the store between
 * its calls can conflict, and only with a transaction that changed what it
 * read meanwhile.
 */
const maxTransactionRuns = 5;

/** The page size of a database file the store creates. */
export const pageSizeBytes = 2048;

/** Sets the connection's pragmas and creates the schema and the resume-token secret when missing. */
function prepareDatabase(database: DatabaseSync, durability: SqliteDurability): void {
  // A new file's pages are 2 KiB, where SQLite's default is 4 KiB. A COMMIT writes every page it dirtied
  // whole to the WAL, and a Step dirties a few pages per table and index for rows of some hundred bytes:
  // at 16 agent sessions the process wrote 781 KB a turn with 4 KiB pages and 236–243 KB with 2 KiB, and
  // SQLite's CPU per turn fell by a fifth (1 KiB pages cost more again: deeper trees, more overflow pages).
  // It only takes effect before the file's first table; an existing file keeps its page size.
  database.exec(`PRAGMA page_size = ${pageSizeBytes}`);
  database.exec("PRAGMA journal_mode = WAL");
  database.exec(`PRAGMA synchronous = ${durability === "full" ? "FULL" : "NORMAL"}`);
  database.exec("PRAGMA foreign_keys = OFF");
  // Checkpoint less often than the default 1000 pages: every Step rewrites a few pages, and
  // checkpoints were about half of commit time. The WAL is truncated back after each checkpoint.
  database.exec("PRAGMA wal_autocheckpoint = 4000");
  database.exec("PRAGMA journal_size_limit = 67108864");
  database.exec("PRAGMA cache_size = -32768");
  database.exec("BEGIN IMMEDIATE");
  database.exec(sqliteSchema);
  // The resume-token secret exists from the start, so that no read ever has to write it.
  database.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('token_secret', ?)").run(randomBytes(32));
  database.exec("COMMIT");
}

/** The process's connection to one database file, counted by the stores that use it. */
export class SqliteConnection implements TransactionHost {
  readonly path: string;
  readonly settings: SqliteConnectionSettings;
  /** Commit notices for this process's stores; typed as a plain `EventEmitter` so the declarations hold across `@types/node` versions. */
  readonly events: EventEmitter = new EventEmitter();
  private readonly database: DatabaseSync;
  private readonly statements = new Map<string, PreparedStatement>();
  private readonly key: string;
  /** The transaction run that holds the connection's SQLite transaction now. */
  private holder: object | undefined;
  /** Jobs waiting for the connection, oldest first. */
  private readonly jobs: (() => void)[] = [];
  private draining = false;
  private drainQueued = false;
  /** Transactions not settled yet, and who waits for there to be none. */
  private active = 0;
  /** A transaction ran on this connection in the current turn of the event loop (reset at the turn's end). */
  private ranThisTurn = false;
  private idleWaiters: (() => void)[] = [];
  private users = 0;
  private secret: Buffer | undefined;
  private readonly group = new CommitGroup(this);

  private constructor(settings: SqliteConnectionSettings, key: string) {
    this.settings = settings;
    this.path = settings.path;
    this.key = key;
    this.database = new DatabaseSync(settings.path, { timeout: settings.busyTimeoutMs });
    try {
      prepareDatabase(this.database, settings.durability);
    } catch (error) {
      // Whatever failed (another process's write lock past the busy timeout, a file that is not a
      // database, a read-only file), the handle and its file descriptors must not outlive the open.
      // Closing rolls back a transaction the failure left open.
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
  async leave(): Promise<void> {
    this.users -= 1;
    if (this.users > 0) return;
    connections.delete(this.key);
    while (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.database.close();
  }

  get busyTimeoutMs(): number {
    return this.settings.busyTimeoutMs;
  }

  get inTransaction(): boolean {
    return this.database.isTransaction;
  }

  exec(sql: string): void {
    this.database.exec(sql);
  }

  /** A cached prepared statement. */
  statement(sql: string): PreparedStatement {
    let prepared = this.statements.get(sql);
    if (prepared === undefined) {
      prepared = new PreparedStatement(this.database.prepare(sql));
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  /**
   * Runs `work` as one transaction: it commits when the work resolves and
   * rolls back when it throws. The process's transactions take turns on the
   * connection; other processes are serialized by SQLite's write lock, which
   * a transaction holds only while its work runs without waiting on anything
   * but the store. Work that waits on something else between its calls may
   * run again, from the start, when what it read changed meanwhile.
   */
  async transaction<TResult>(work: (statements: TransactionStatements) => Promise<TResult>): Promise<TResult> {
    this.active += 1;
    try {
      for (let run = 1; ; run += 1) {
        const outcome = await new TransactionRun(this, work).execute();
        if (outcome.kind === "committed") return outcome.value;
        if (outcome.kind === "failed") throw outcome.error;
        if (run >= maxTransactionRuns) {
          throw new SqliteTransactionConflict(
            `a transaction on the SQLite store at ${this.path} ran ${run} times, and each time what it read changed while it waited on something other than the store; `
            + "keep RPC handlers to store calls (do I/O in Steps), or retry",
          );
        }
      }
    } finally {
      this.settled();
    }
  }

  /**
   * Runs `operation`, which makes only synchronous statement calls, as one
   * member of the connection's group commit: its writes land with the
   * group's COMMIT, and the promise settles once they did. A member that
   * throws is rolled back alone. When the group's COMMIT fails with other
   * members in it, the operation runs again, as a transaction run would.
   * Nothing here waits, so it needs neither the statement log nor a replay.
   */
  runAtomically<TResult>(operation: () => TResult): Promise<TResult> {
    this.active += 1;
    return new Promise<TResult>((resolve, reject) => {
      const attempt = (run: number): void => this.whenFree(() => {
        try {
          this.group.beginMember();
        } catch (error) {
          reject(asError(error));
          return;
        }
        let value: TResult;
        try {
          value = operation();
        } catch (error) {
          try {
            this.group.rollbackMember();
          } finally {
            reject(asError(error));
          }
          return;
        }
        this.group.commitMember((failure) => {
          if (failure === undefined) resolve(value);
          else if (failure.alone || run >= maxTransactionRuns) reject(asError(failure.error));
          else attempt(run + 1);
        });
      });
      attempt(1);
    }).finally(() => this.settled());
  }

  /** One transaction or operation less in flight; the last one lets `leave()` close the connection. */
  private settled(): void {
    this.active -= 1;
    if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  get runsWaiting(): boolean {
    return this.jobs.length > 0;
  }

  beginMember(): void {
    this.group.beginMember();
  }

  commitMember(settled: MemberSettled): void {
    this.group.commitMember(settled);
  }

  rollbackMember(): void {
    this.group.rollbackMember();
  }

  commitGroup(): void {
    this.group.commit();
  }

  whenFree(job: () => void): void {
    this.jobs.push(job);
    if (this.holder !== undefined || this.draining || this.drainQueued) return;
    // Work never starts inside the caller's own call. Under `full`, where each COMMIT waits for an
    // fsync, it starts after this turn's callbacks and microtasks, so that the transactions they ask
    // for queue up and share one commit. Without the fsync the same holds once this turn already
    // ran a transaction, or others are in flight (concurrent Steps): one COMMIT writes the pages they
    // share to the WAL once. The turn's first transaction starts at once: waiting a turn would cost a
    // lone transaction more than it saves.
    this.drainQueued = true;
    const start = (): void => {
      this.drainQueued = false;
      this.drain();
    };
    if (this.settings.durability === "full" || this.active > 1 || this.ranThisTurn) setImmediate(start);
    else queueMicrotask(start);
  }

  hold(run: object): void {
    this.holder = run;
  }

  release(): void {
    this.holder = undefined;
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.holder === undefined) {
        const job = this.jobs.shift();
        if (job !== undefined && !this.ranThisTurn) {
          this.ranThisTurn = true;
          setImmediate(() => {
            this.ranThisTurn = false;
          });
        }
        if (job === undefined) {
          // Nobody else waits to join: the open group commits now.
          this.group.commit();
          break;
        }
        job();
      }
    } finally {
      this.draining = false;
    }
  }

  wake(event: WakeEvent): void {
    this.events.emit("wake", event);
  }

  /** The resume-token secret, read once. */
  async tokenSecret(): Promise<Buffer> {
    if (this.secret !== undefined) return this.secret;
    const row = await this.transaction(async (statements) => statements.get("SELECT value FROM meta WHERE key = 'token_secret'", []) as { value: Uint8Array } | undefined);
    if (row === undefined) throw new Error(`the token secret of the SQLite store at ${this.path} vanished`);
    this.secret = Buffer.from(row.value);
    return this.secret;
  }
}
