import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import pg from "pg";
import { StoreClosedError } from "../../errors/store-closed-error.ts";
import type { ClaimLease, Store, StoreTransaction, WakeEvent } from "../../store/store.ts";
import { ConnectionPermits } from "./connection-permits.ts";
import { DatabaseClock, readDatabaseTimeSql } from "./database-clock.ts";
import { applyMigrations } from "../migrations/migrations.ts";
import { resolvePostgresStoreOptions, type PostgresStoreOptions, type ResolvedPostgresStoreOptions } from "./postgres-store-options.ts";
import { PostgresOneRequest } from "./postgres-one-request.ts";
import { statementName } from "./postgres-columns.ts";
import { PostgresTransaction, TransactionConflict, type WorkerPresence } from "./postgres-transaction.ts";
import { oneRequestFunctionsMigration } from "../migrations/0002-one-request-functions.ts";
import { appendStreamFunctionMigration } from "../migrations/0007-append-stream.ts";
import { appendStreamsFunctionMigration } from "../migrations/0013-append-streams.ts";
import { claimLocksAndLoadsMigration } from "../migrations/0008-claim-locks-and-loads.ts";
import { commitWaitsAndPublishesMigration } from "../migrations/0009-commit-step-waits-and-publishes.ts";
import { claimReadsLoadsMigration } from "../migrations/0010-claim-reads-loads.ts";
import { commitStreamsMigration } from "../migrations/0020-commit-streams.ts";
import { streamBatchesAndRpcWakesMigration } from "../migrations/0021-stream-batches-and-rpc-wakes.ts";
import { publishRpcClaimingMigration } from "../migrations/0022-publish-rpc-claiming.ts";
import { leanerClaimsAndCommitsMigration } from "../migrations/0023-leaner-claims-and-commits.ts";
import { publishRpcMigration } from "../migrations/0014-publish-rpc.ts";
import { lookNow, WakeChannel } from "./wake-channel.ts";

/** BIGINT columns hold milliseconds and counters, all safe integers: read them as numbers. */
const int8Oid = 20;
const parseInt8 = (value: string): number => Number(value);
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary"): unknown => (oid === int8Oid ? parseInt8 : pg.types.getTypeParser(oid, format))) as pg.CustomTypesConfig["getTypeParser"],
};

/** SQLSTATEs after which the same transaction, run again, can succeed. */
const retryableCodes = new Set(["40001", "40P01"]);

function isRetryable(error: unknown): boolean {
  return error instanceof TransactionConflict || retryableCodes.has((error as { code?: unknown } | null)?.code as string);
}

/** Sent before the COMMIT of a transaction that changed nothing. */
const relaxedCommitSql = "SET LOCAL synchronous_commit = off";
/** A read for `Store.read`: one snapshot for all its statements, and a write in it fails. */
const beginReadSql = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/** How soon to look again when a claim skipped tasks whose Flow another transaction held. */
const skippedRowsRetryMs = 25;

/** Wake events only Workers act on; a Client waits on Streams, Attributes and Flow ends. */
function isWorkersOnly(event: WakeEvent): boolean {
  return event.kind === "tasks" || event.kind === "timers" || event.kind === "executions_cancelled";
}

/**
 * How long a liveness write's finding that no other Worker is alive holds:
 * a running Worker writes at least every second, so a finding this old
 * means its writes are failing, and wake-ups go out again.
 */
const presenceValidMs = 3000;

/**
 * The distributed store: PostgreSQL 15 or later through `pg`. Any number of
 * Workers and Clients on any number of machines share one database.
 *
 * - Each transaction runs on its own pooled connection (BEGIN … COMMIT at
 *   READ COMMITTED); commits of one Flow serialize on its row lock, commits
 *   of different Flows run in parallel, and Workers claim with
 *   `FOR UPDATE SKIP LOCKED` so they never wait for each other.
 * - Deadlocks and serialization failures retry the whole transaction; a
 *   connection lost mid-transaction fails only that transaction, and the
 *   pool opens a new connection for the next one.
 * - Wake-ups reach other processes through LISTEN/NOTIFY; polling is the
 *   fallback.
 * - The schema is created and migrated on open, safely when several
 *   processes start at once.
 * - Leases, liveness and Timers run on the database server's clock (read on
 *   open and every few seconds along with a transaction), so processes
 *   whose wall clocks disagree still agree on who holds what.
 *
 * @example
 * const store = await PostgresStore.open({ connectionString: process.env.PERDURE_DATABASE_URL! });
 */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly maxValueBytes: number;
  readonly pollIntervalMs: number;
  /** The database server's clock, carried forward on this process's monotonic clock. */
  readonly clock = new DatabaseClock();
  /** The schema holding this store's tables. */
  readonly schema: string;
  private readonly options: ResolvedPostgresStoreOptions;
  private readonly quotedSchema: string;
  private readonly pool: pg.Pool;
  /** One per pooled connection: a burst of requests waits here, in order, rather than in the pool, which times out. */
  private readonly permits: ConnectionPermits;
  private readonly events = new EventEmitter();
  private readonly wakeChannel: WakeChannel;
  private readonly active = new Set<Promise<unknown>>();
  private closed = false;
  /** The Workers whose liveness this store writes (this process's), and what their last write found of others. */
  private readonly localWorkers = new Set<string>();
  private othersAlive = { alive: true, at: -Infinity };
  private readonly presence: WorkerPresence = {
    now: () => this.clock.now(),
    touched: (workerId) => [...this.localWorkers.add(workerId)],
    removed: (workerId) => {
      this.localWorkers.delete(workerId);
    },
    saw: (alive, at) => {
      this.othersAlive = { alive, at };
    },
  };
  /** The server's timeline at the last commit-position reading, and the highest position read on it. */
  private commitTimeline: { timeline: number; highest: bigint } | undefined;
  private secret: Buffer | undefined;
  /** Set on open once the schema has the functions of migration 0002 (a store opened with `migrate: false` may lack them). */
  oneRequest: PostgresOneRequest | undefined;
  /** The schema has migration 0021: a transaction appends a Stream batch in one statement (`StoreTransaction.appendStreams`). */
  private writesStreamBatches = false;
  private skippedRowsTimer: NodeJS.Timeout | undefined;
  /** See `Store.confirmClaim`; absent with `singleAttemptClaimCommit: "inherit"`. */
  readonly confirmClaim: ((lease: ClaimLease) => Promise<boolean>) | undefined;
  private readonly confirmStatement: { name: string; text: string };

  private constructor(options: ResolvedPostgresStoreOptions) {
    this.options = options;
    this.maxValueBytes = options.maxValueBytes;
    this.pollIntervalMs = options.pollIntervalMs;
    this.schema = options.schema;
    this.quotedSchema = pg.escapeIdentifier(options.schema);
    const connection: pg.ClientConfig = {
      connectionString: options.connectionString,
      keepAlive: true,
      connectionTimeoutMillis: options.connectTimeoutMs,
      application_name: options.applicationName,
      // A frozen process must not hold Flow row locks for good, nor make others wait for them forever.
      idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs,
      lock_timeout: options.lockTimeoutMs,
    };
    // The confirmation of a single-attempt claim (see `confirmLease`), one statement and so one transaction.
    // It raises synchronous_commit for its own transaction (never lowers it), then takes the weakest row lock
    // on the execution, only when this Worker holds it: the lock gives the transaction an ID and a WAL record,
    // so its commit waits for the synchronous standbys, and with it everything committed before, the claim
    // among it. A commit holds its locks while it waits for a standby; FOR KEY SHARE of the execution row
    // conflicts only with FOR UPDATE of that row and its deletion, so the session's other commits (messages,
    // approvals, its other Steps), which lock its Flow row, do not wait with it. Not held: no lock, no wait.
    const confirmText = `WITH raised AS (SELECT set_config('synchronous_commit', CASE
          WHEN array_position(ARRAY['off', 'local', 'remote_write', 'on', 'remote_apply'], current_setting('synchronous_commit'))
            >= array_position(ARRAY['off', 'local', 'remote_write', 'on', 'remote_apply'], $5::text)
          THEN current_setting('synchronous_commit') ELSE $5::text END, true) AS level),
        leased AS (SELECT e.execution_id FROM ${this.quotedSchema}.executions e
          WHERE e.flow_id = $1 AND e.execution_id = $2 AND e.claimed_by = $3 AND e.lease_token = $4 FOR KEY SHARE)
      SELECT (SELECT level FROM raised) AS level, EXISTS (SELECT 1 FROM leased) AS held`;
    this.confirmStatement = { name: statementName(confirmText), text: confirmText };
    const level = options.singleAttemptClaimCommit;
    this.confirmClaim = level === "inherit" ? undefined : (lease) => this.track(() => this.confirmLease(lease, level));
    // Pipelined: statements of a transaction go out without waiting for the previous answer.
    this.permits = new ConnectionPermits(options.poolSize);
    this.pool = new pg.Pool({ ...connection, max: options.poolSize, idleTimeoutMillis: options.idleConnectionTimeoutMs, types: typeParsers, pipeline: true });
    // An idle connection that dies (server restart) is dropped by the pool; say so once.
    this.pool.on("error", (error) => options.onError(new Error(`perdure postgres: an idle connection failed: ${error.message}`, { cause: error })));
    this.events.setMaxListeners(0);
    this.wakeChannel = new WakeChannel({
      connection,
      channel: `perdure_wake_${options.schema}`,
      notify: async (channel, payloads) => {
        const connection = await this.checkOut();
        try {
          await connection.client.query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload", [channel, payloads]);
          connection.release();
        } catch (error) {
          connection.release(error);
          throw error;
        }
      },
      deliver: (event) => this.events.emit("wake", event),
      onError: options.onError,
    });
  }

  /**
   * Connects, applies missing migrations (unless `migrate: false`) and starts
   * listening for wake-ups from other processes.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(resolvePostgresStoreOptions(options));
    try {
      if (store.options.migrate) await store.applyMigrations();
      await store.readDatabaseClock();
      if (await store.hasMigration(oneRequestFunctionsMigration.name)) {
        store.oneRequest = new PostgresOneRequest(store.quotedSchema, (statement, values) => store.runStatement(statement, values), () => store.lookAgainSoon(), {
          maxGroupsInFlight: store.options.maxCommitGroupsInFlight,
          maxGroupSize: 64,
        }, await store.hasMigration(appendStreamFunctionMigration.name) ? {
          wakePayload: (event) => store.wakeChannel.payloadOf(event),
          workerWakePayload: (event) => store.aloneWithItsWorkers() ? undefined : store.wakeChannel.payloadOf(event),
          wakeLocally: (event) => store.events.emit("wake", event),
          batches: await store.hasMigration(appendStreamsFunctionMigration.name),
        } : undefined, await store.hasMigration(claimLocksAndLoadsMigration.name), await store.hasMigration(commitWaitsAndPublishesMigration.name), await store.hasMigration(claimReadsLoadsMigration.name));
        if (await store.hasMigration(publishRpcMigration.name)) store.oneRequest.enablePublishRpc();
        if (await store.hasMigration(commitStreamsMigration.name)) store.oneRequest.enableCommitStreams();
        if (await store.hasMigration(streamBatchesAndRpcWakesMigration.name)) {
          store.oneRequest.enableRpcWakes();
          store.writesStreamBatches = true;
        }
        if (await store.hasMigration(publishRpcClaimingMigration.name)) store.oneRequest.enableRpcClaims();
        if (await store.hasMigration(leanerClaimsAndCommitsMigration.name)) store.oneRequest.enableCompactClaims();
        if (store.confirmClaim !== undefined) store.oneRequest.relaxClaimCommits();
      }
      // The resume-token secret exists from the start, so that no read ever has to write it.
      await store.tokenSecret();
      await store.wakeChannel.start();
    } catch (error) {
      await store.pool.end().catch(() => undefined);
      throw error;
    }
    return store;
  }

  /**
   * Applies missing migrations to the schema and returns their names, without
   * opening a store: for a deployment step (`perdure migrate`).
   *
   * @example
   * await PostgresStore.migrate({ connectionString, schema: "perdure" });
   */
  static async migrate(options: PostgresStoreOptions): Promise<string[]> {
    const resolved = resolvePostgresStoreOptions(options);
    const client = new pg.Client({ connectionString: resolved.connectionString, connectionTimeoutMillis: resolved.connectTimeoutMs });
    // A connection the server drops reports through the failing query; the event alone must not crash.
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await applyMigrations(client, resolved.schema, pg.escapeIdentifier(resolved.schema));
    } finally {
      await client.end();
    }
  }

  private async hasMigration(name: string): Promise<boolean> {
    const connection = await this.checkOut();
    try {
      const result = await connection.client.query(`SELECT 1 FROM ${this.quotedSchema}.schema_migrations WHERE name = $1`, [name]);
      connection.release();
      return result.rows.length > 0;
    } catch (error) {
      connection.release(error);
      // A schema created by hand without the migrations table: no functions either.
      if ((error as { code?: unknown }).code === "42P01") return false;
      throw error;
    }
  }

  /** Reads the server's clock on a connection of its own (on open, before any transaction). */
  private async readDatabaseClock(): Promise<void> {
    const connection = await this.checkOut();
    try {
      await this.readClockAlong(connection.client);
      connection.release();
    } catch (error) {
      connection.release(error);
      throw error;
    }
  }

  private async applyMigrations(): Promise<void> {
    const connection = await this.checkOut();
    try {
      await applyMigrations(connection.client, this.schema, this.quotedSchema);
      connection.release();
    } catch (error) {
      connection.release(error);
      throw error;
    }
  }

  /**
   * A pooled connection with an error listener for while it is checked out:
   * a connection the server drops between statements emits `error`, which
   * must not crash the process. `release` destroys a connection that failed.
   * A checkout first waits for one of the store's permits (one per pooled
   * connection), in arrival order and without a timeout.
   */
  private async checkOut(): Promise<{ client: pg.PoolClient; release(failure?: unknown): void; failed(): Error | undefined }> {
    await this.permits.acquire();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.permits.release();
      throw error;
    }
    let released = false;
    let lost: Error | undefined;
    const onError = (error: Error): void => {
      lost ??= error;
    };
    client.on("error", onError);
    return {
      client,
      failed: () => lost,
      release: (failure?: unknown) => {
        if (released) return;
        released = true;
        const broken = lost ?? (failure === undefined ? undefined : failure instanceof Error ? failure : new Error("the transaction failed", { cause: failure }));
        // The pool listens to idle connections again; a destroyed one may still report its end, so keep ours.
        if (broken === undefined) client.off("error", onError);
        client.release(broken);
        this.permits.release();
      },
    };
  }

  transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    return this.track(() => this.runTransaction(work, false));
  }

  /** A read-only transaction at REPEATABLE READ: every statement sees one snapshot, and no Flow row is locked. */
  read<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    return this.track(() => this.runTransaction(work, true));
  }

  /** Runs an operation unless the store is closed, and keeps it among the operations `close` waits for. */
  private track<TResult>(run: () => Promise<TResult>): Promise<TResult> {
    if (this.closed) return Promise.reject(new StoreClosedError(`the PostgreSQL store on schema ${this.schema} is closed`));
    const running = run();
    const tracked = running.catch(() => undefined);
    this.active.add(tracked);
    void tracked.finally(() => this.active.delete(tracked));
    return running;
  }

  private async runTransaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>, reading: boolean): Promise<TResult> {
    for (let attempt = 1; ; attempt++) {
      const connection = await this.checkOut();
      const { client } = connection;
      let beginFailed = false;
      // Pipelined: BEGIN travels with the transaction's first statement.
      const begin = client.query(reading ? beginReadSql : "BEGIN").then(() => undefined, (error: unknown) => {
        beginFailed = true;
        throw error;
      });
      begin.catch(() => undefined);
      // Pipelined too: a fresh reading of the server's clock rides along now and then.
      const clockReading = this.clock.isStale ? this.readClockAlong(client) : Promise.resolve();
      try {
        const transaction = new PostgresTransaction(client, this.quotedSchema, { reading, writesStreamBatches: this.writesStreamBatches, presence: this.presence });
        const result = await work(transaction);
        await begin;
        await clockReading;
        await transaction.settle();
        // A transaction that only read has nothing to make durable, though its row locks gave it a
        // transaction ID: its COMMIT need not wait for a WAL flush (pipelined, the same round trip).
        // A read (`Store.read`) takes no row locks and so has no transaction ID: its COMMIT flushes nothing anyway.
        const relaxed = transaction.changedNothing && !reading ? client.query(relaxedCommitSql) : undefined;
        relaxed?.catch(() => undefined);
        await client.query("COMMIT");
        await relaxed;
        connection.release();
        if (transaction.skippedLockedRows) this.lookAgainSoon();
        return result;
      } catch (error) {
        const broken = connection.failed() !== undefined || await client.query("ROLLBACK").then(() => false, () => true);
        // A broken connection is destroyed; the pool opens a fresh one for the next transaction.
        connection.release(broken ? error : undefined);
        // When BEGIN itself failed nothing ran, and a read changes nothing: on a broken
        // connection either may try again on a fresh one.
        const retry = isRetryable(error) || (broken && (beginFailed || reading));
        if (!retry || attempt >= this.options.maxTransactionAttempts || this.closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  }

  /**
   * Runs one statement as a transaction of its own (autocommit) and returns
   * its first row: the one-request operations. A fresh clock reading rides
   * along, pipelined, when due. Deadlocks and serialization failures retry
   * (the statement applied nothing); any other failure is the caller's,
   * because a statement whose answer was lost may have committed.
   */
  private runStatement<TRow>(statement: { name: string; text: string }, values: unknown[]): Promise<TRow> {
    return this.track(() => this.runStatementWithRetries<TRow>(statement, values));
  }

  private async runStatementWithRetries<TRow>(statement: { name: string; text: string }, values: unknown[]): Promise<TRow> {
    for (let attempt = 1; ; attempt++) {
      const connection = await this.checkOut();
      const { client } = connection;
      const clockReading = this.clock.isStale ? this.readClockAlong(client) : Promise.resolve();
      try {
        const result = await client.query({ ...statement, values });
        await clockReading;
        connection.release();
        const [row] = result.rows as TRow[];
        if (row === undefined) throw new Error(`the PostgreSQL statement ${statement.name} returned no row`);
        return row;
      } catch (error) {
        // An error the server answered leaves the connection usable; anything else may have broken it.
        const answered = typeof (error as { code?: unknown } | null)?.code === "string";
        connection.release(connection.failed() !== undefined || !answered ? error : undefined);
        if (!isRetryable(error) || attempt >= this.options.maxTransactionAttempts || this.closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  }

  /** Sends a reading of the server's clock on `client`; inside a transaction, a failure fails the transaction. */
  private readClockAlong(client: pg.PoolClient): Promise<void> {
    const sentAt = this.clock.startReading();
    const reading = client.query<{ now_ms: number }>(readDatabaseTimeSql).then((result) => this.clock.observe(Number(result.rows[0]?.now_ms), sentAt));
    reading.catch(() => undefined);
    return reading;
  }

  /** Wakes local Workers shortly, once, because a claim skipped Flows that were busy. */
  private lookAgainSoon(): void {
    if (this.skippedRowsTimer !== undefined) return;
    this.skippedRowsTimer = setTimeout(() => {
      this.skippedRowsTimer = undefined;
      this.events.emit("wake", lookNow);
    }, Math.min(skippedRowsRetryMs, this.pollIntervalMs));
    this.skippedRowsTimer.unref();
  }

  wake(event: WakeEvent): void {
    this.events.emit("wake", event);
    if (isWorkersOnly(event) && this.aloneWithItsWorkers()) return;
    this.wakeChannel.publish(event);
  }

  /**
   * True while this store's Workers are the only ones alive, as the last
   * liveness write of one of them found within {@link presenceValidMs}:
   * Workers' wake-ups (tasks, Timers, cancellations) then reach only this
   * process, which heard them already, and go out as no NOTIFY. A Worker
   * that starts elsewhere is seen at the next liveness write (a Worker
   * writes every second at most), and polls meanwhile.
   */
  private aloneWithItsWorkers(): boolean {
    return this.localWorkers.size > 0 && !this.othersAlive.alive && this.clock.now() - this.othersAlive.at < presenceValidMs;
  }

  subscribe(listener: (event: WakeEvent) => void): () => void {
    this.events.on("wake", listener);
    return () => this.events.off("wake", listener);
  }

  async tokenSecret(): Promise<Buffer> {
    if (this.secret !== undefined) return this.secret;
    const created = randomBytes(32);
    const connection = await this.checkOut();
    const { client } = connection;
    try {
      // Processes opening a fresh schema at once race here: the first insert wins, everyone reads it.
      await client.query(`INSERT INTO ${this.quotedSchema}.meta (key, value) VALUES ('token_secret', $1) ON CONFLICT (key) DO NOTHING`, [created]);
      const result = await client.query<{ value: Buffer }>(`SELECT value FROM ${this.quotedSchema}.meta WHERE key = 'token_secret'`);
      const value = result.rows[0]?.value;
      if (value === undefined) throw new Error(`the token secret of PostgreSQL schema ${this.schema} vanished`);
      this.secret = value;
      connection.release();
      return value;
    } catch (error) {
      connection.release(error);
      throw error;
    }
  }

  /**
   * How far the database's commits are safe from a failover, as a
   * write-ahead log position: what the synchronous standbys have flushed
   * when there are any (and this role may read `pg_stat_replication`), else
   * the server's own position (`pg_current_wal_lsn()`). It only grows; a
   * Worker that sees it fall knows the store went back in time (a failover
   * to a standby that had not received everything).
   *
   * The first reading on a new timeline (the server was promoted since the
   * last reading) is where the timeline forked off, the last position the
   * promoted standby had replayed, when that is below the highest position
   * read on the old timeline: the new primary's own commits may already
   * have carried its position past the old one, and that must not hide the
   * commits it never received.
   */
  async commitPosition(): Promise<bigint> {
    const connection = await this.checkOut();
    try {
      const result = await connection.client.query<{ lsn: string; wal_file: string; replayed: string | null }>(
        "SELECT COALESCE((SELECT max(flush_lsn) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')), pg_current_wal_lsn())::text AS lsn, "
          + "pg_walfile_name(pg_current_wal_lsn()) AS wal_file, pg_last_wal_replay_lsn()::text AS replayed",
      );
      connection.release();
      const row = result.rows[0];
      const position = lsnToBigInt(row?.lsn ?? "0/0");
      // A WAL file name starts with the timeline in 8 hexadecimal digits.
      const timeline = Number.parseInt((row?.wal_file ?? "00000001").slice(0, 8), 16);
      const previous = this.commitTimeline;
      const sameTimeline = previous !== undefined && previous.timeline === timeline;
      this.commitTimeline = { timeline, highest: sameTimeline && previous.highest > position ? previous.highest : position };
      if (previous !== undefined && timeline > previous.timeline && row?.replayed != null) {
        const forkedAt = lsnToBigInt(row.replayed);
        if (forkedAt < previous.highest) return forkedAt;
      }
      return position;
    } catch (error) {
      connection.release(error);
      throw error;
    }
  }

  /**
   * Whether the store still shows `lease`, in a commit at `synchronous_commit`
   * `level` or above. A warning during the statement means the server stopped
   * waiting for the standbys (a cancelled wait: the commit is local only), so
   * the claim is not confirmed and this throws; so does a lost connection.
   */
  private async confirmLease(lease: ClaimLease, level: Exclude<ResolvedPostgresStoreOptions["singleAttemptClaimCommit"], "inherit">): Promise<boolean> {
    const connection = await this.checkOut();
    const { client } = connection;
    const warnings: string[] = [];
    const onNotice = (notice: { severity?: string | undefined; message?: string | undefined }): void => {
      if (notice.severity === "WARNING") warnings.push(notice.message ?? "");
    };
    client.on("notice", onNotice);
    try {
      const result = await client.query<{ level: string; held: boolean }>({ ...this.confirmStatement, values: [lease.flowId, lease.executionId, lease.workerId, lease.leaseToken, level] });
      if (warnings.length > 0) throw new Error(`PostgreSQL did not confirm the claim of execution ${lease.executionId} of session ${lease.flowId} as replicated: ${warnings.join("; ")}`);
      client.off("notice", onNotice);
      connection.release();
      return result.rows[0]?.held === true;
    } catch (error) {
      client.off("notice", onNotice);
      // An error the server answered leaves the connection usable; anything else may have broken it.
      const answered = typeof (error as { code?: unknown } | null)?.code === "string";
      connection.release(connection.failed() !== undefined || !answered ? error : undefined);
      throw error;
    }
  }

  /** Waits for running transactions, sends pending wake-ups, and closes every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.active);
    clearTimeout(this.skippedRowsTimer);
    await this.wakeChannel.close();
    await this.pool.end();
  }
}

/** A PostgreSQL LSN (`16/B374D848`) as one number. */
function lsnToBigInt(lsn: string): bigint {
  const [high = "0", low = "0"] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}
