import { InvalidInputError } from "../errors/invalid-input-error.ts";
import { StoreClosedError } from "../errors/store-closed-error.ts";
import type { OneRequestOperations } from "../store/step-commit.ts";
import type { Store, StoreTransaction, WakeEvent } from "../store/store.ts";
import { systemClock, type StoreClock } from "../store/store-clock.ts";
import { SqliteConnection, type SqliteDurability } from "./sqlite-connection.ts";
import { SqliteOneRequest } from "./sqlite-one-request.ts";
import { SqliteTransaction } from "./sqlite-transaction.ts";

export type { SqliteDurability } from "./sqlite-connection.ts";

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
  /** Every process on the file shares the machine's clock. */
  readonly clock: StoreClock = systemClock;
  readonly path: string;
  /**
   * Plain Step commits, claims, starts and Flow reads, each one synchronous
   * run of statements (see `sqlite-one-request.ts`). Set it to `undefined` to
   * run everything as general transactions.
   */
  oneRequest: OneRequestOperations | undefined;
  private readonly connection: SqliteConnection;
  private closed = false;
  /** This store's latest queued transaction; `close()` lets it finish. */
  private pending: Promise<unknown> = Promise.resolve();

  private constructor(options: ResolvedSqliteStoreOptions) {
    this.maxValueBytes = options.maxValueBytes;
    this.pollIntervalMs = options.pollIntervalMs;
    this.path = options.path;
    this.connection = SqliteConnection.acquire({ path: options.path, durability: options.durability, busyTimeoutMs: options.busyTimeoutMs });
    const connection = this.connection;
    this.oneRequest = new SqliteOneRequest({
      statement: (sql) => connection.statement(sql),
      runAtomically: (operation) => this.runAtomically(operation),
      wake: (event) => connection.wake(event),
    });
  }

  private runAtomically<TResult>(operation: () => TResult): Promise<TResult> {
    if (this.closed) return Promise.reject(new StoreClosedError(`the SQLite store at ${this.path} is closed`));
    const result = this.connection.runAtomically(operation);
    this.pending = result.catch(() => undefined);
    return result;
  }

  /**
   * Opens (and creates when missing) the database file. Stores opened on one
   * file in one process share its connection, so they must agree on
   * `durability` and `busyTimeoutMs`.
   */
  static open(options: SqliteStoreOptions): SqliteStore {
    return new SqliteStore(resolveSqliteStoreOptions(options));
  }

  transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    if (this.closed) return Promise.reject(new StoreClosedError(`the SQLite store at ${this.path} is closed`));
    const result = this.connection.transaction((statements) => work(new SqliteTransaction(statements)));
    this.pending = result.catch(() => undefined);
    return result;
  }

  wake(event: WakeEvent): void {
    this.connection.wake(event);
  }

  subscribe(listener: (event: WakeEvent) => void): () => void {
    this.connection.events.on("wake", listener);
    return () => this.connection.events.off("wake", listener);
  }

  tokenSecret(): Promise<Buffer> {
    return this.connection.tokenSecret();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pending;
    await this.connection.leave();
  }
}
