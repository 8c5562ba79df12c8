import { InvalidInputError } from "../../errors/invalid-input-error.ts";

/** Options of {@link PostgresStore.open}. */
export interface PostgresStoreOptions {
  /** A libpq-style URL, such as `postgres://user:password@host:5432/database`. */
  connectionString: string;
  /**
   * The PostgreSQL schema holding the engine's tables; created when missing.
   * Stores on different schemas of one database are independent.
   * @default "perdure"
   */
  schema?: string;
  /**
   * Connections in this store's pool. Each store transaction holds one for
   * its duration; the LISTEN connection comes on top. Requests beyond it
   * wait in arrival order for a connection, however many arrive at once.
   * @default 10
   */
  poolSize?: number;
  /**
   * Largest encoded value a commit accepts.
   * @default 16_777_216 (16 MiB)
   */
  maxValueBytes?: number;
  /**
   * How often Workers look for work when no notification arrives. Wake-ups
   * travel by LISTEN/NOTIFY, so this is only the fallback.
   * @default 1000
   */
  pollIntervalMs?: number;
  /**
   * Applies missing migrations when the store opens. Turn off when a
   * deployment step runs {@link PostgresStore.migrate} instead.
   * @default true
   */
  migrate?: boolean;
  /**
   * Attempts of one transaction when PostgreSQL aborts it for a
   * serialization failure or deadlock, or a concurrent start of the same
   * flow ID wins; the last failure is thrown.
   * @default 5
   */
  maxTransactionAttempts?: number;
  /**
   * Step commits are grouped: those that arrive while this many groups are
   * on their way to the server wait and go together in the next group, one
   * transaction and one WAL flush for all of them (each still fenced and
   * failing on its own). 1 groups the most; higher values send sooner.
   * @default 2
   */
  maxCommitGroupsInFlight?: number;
  /**
   * How long getting a connection may take before the transaction fails.
   * @default 10_000
   */
  connectTimeoutMs?: number;
  /**
   * How long a pooled connection may sit unused before the pool closes it.
   * A fresh connection costs authentication, and its first calls plan the
   * engine's statements and functions on that server session again (10–50 ms
   * in all), so a Worker keeps its pool warm between bursts of work. Lower it
   * when many processes share a server with few connection slots.
   * @default 300_000 (5 minutes)
   */
  idleConnectionTimeoutMs?: number;
  /**
   * How long a connection may sit idle inside a transaction before the
   * server ends its session (`idle_in_transaction_session_timeout`). The
   * store's transactions never wait on the client for long, so a session
   * idle this long belongs to a frozen process (SIGSTOP, a debugger, a
   * stalled VM): ending it frees its Flow row locks for everyone else.
   * @default 10_000
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * How long a statement waits for a row lock before it fails
   * (`lock_timeout`), so that no Client call hangs for good behind a lock
   * the server has not yet taken back. Longer than
   * `idleInTransactionTimeoutMs`, so a frozen holder is ended first.
   * @default 20_000
   */
  lockTimeoutMs?: number;
  /**
   * `application_name` of this store's connections, as `pg_stat_activity` shows it.
   * @default "perdure"
   */
  applicationName?: string;
  /**
   * The `synchronous_commit` of the commit that confirms a single-attempt
   * attempt's claim (an `execute` with `retry.maximumAttempts` 1, such as a
   * `non_idempotent_write` tool call) just before it starts: that commit
   * comes after the claim's, so waiting for it waits for the claim too.
   * With a standby in `synchronous_standby_names` and the default
   * `synchronous_commit = local`, ordinary commits stay asynchronous and only
   * these wait, so no failover can lose the claim of a write that started
   * and let another Worker run it again. Raised, never lowered: a role
   * already at `remote_apply` keeps it. `"inherit"` sends no confirmation
   * (one round trip less per single-attempt Step; right when every commit is
   * synchronous anyway, or no standby exists). Without synchronous standbys
   * PostgreSQL waits for none, whatever this says.
   * @default "on"
   */
  singleAttemptClaimCommit?: SingleAttemptClaimCommit;
  /** Called once for each error no caller can receive (lost LISTEN connection, failed NOTIFY, idle connection errors). @default logs to stderr */
  onError?: (error: unknown) => void;
}

/** {@link PostgresStoreOptions.singleAttemptClaimCommit}: a `synchronous_commit` level that waits for standbys, or no confirmation. */
export type SingleAttemptClaimCommit = "remote_write" | "on" | "remote_apply" | "inherit";

const singleAttemptClaimCommits: readonly SingleAttemptClaimCommit[] = ["remote_write", "on", "remote_apply", "inherit"];

export interface ResolvedPostgresStoreOptions {
  connectionString: string;
  schema: string;
  poolSize: number;
  maxValueBytes: number;
  pollIntervalMs: number;
  migrate: boolean;
  maxTransactionAttempts: number;
  maxCommitGroupsInFlight: number;
  connectTimeoutMs: number;
  idleConnectionTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  lockTimeoutMs: number;
  applicationName: string;
  singleAttemptClaimCommit: SingleAttemptClaimCommit;
  onError: (error: unknown) => void;
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,47}$/;

export function resolvePostgresStoreOptions(options: PostgresStoreOptions): ResolvedPostgresStoreOptions {
  if (typeof options.connectionString !== "string" || options.connectionString.length === 0) {
    throw new InvalidInputError("PostgreSQL store connectionString is missing: give a URL such as postgres://user:password@localhost:5432/app");
  }
  // node-postgres connects to one host; a libpq list of hosts would otherwise fail later as an unparsable URL.
  const authority = /^[a-z]+:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(options.connectionString)?.[1] ?? "";
  if (authority.includes(",")) {
    throw new InvalidInputError(
      `PostgreSQL connectionString names several hosts (${authority}); the driver connects to one: put a TCP proxy or a virtual IP that follows the primary `
        + "in front of them and name that (see docs/postgres.md, Failover)",
    );
  }
  const schema = options.schema ?? "perdure";
  if (typeof schema !== "string" || !schemaPattern.test(schema)) {
    throw new InvalidInputError(`PostgreSQL schema ${JSON.stringify(schema)} is invalid: use 1 to 48 lowercase letters, digits or "_", not starting with a digit`);
  }
  const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
    const resolved = value ?? fallback;
    if (!Number.isSafeInteger(resolved) || resolved <= 0) {
      throw new InvalidInputError(`PostgreSQL store option ${name} ${String(value)} is invalid: use a positive integer`);
    }
    return resolved;
  };
  const singleAttemptClaimCommit = options.singleAttemptClaimCommit ?? "on";
  if (!singleAttemptClaimCommits.includes(singleAttemptClaimCommit)) {
    throw new InvalidInputError(`PostgreSQL store option singleAttemptClaimCommit ${JSON.stringify(singleAttemptClaimCommit)} is invalid: use ${singleAttemptClaimCommits.map((value) => `"${value}"`).join(", ")}`);
  }
  return {
    connectionString: options.connectionString,
    schema,
    poolSize: positiveInteger("poolSize", options.poolSize, 10),
    maxValueBytes: positiveInteger("maxValueBytes", options.maxValueBytes, 16 * 1024 * 1024),
    pollIntervalMs: positiveInteger("pollIntervalMs", options.pollIntervalMs, 1000),
    migrate: options.migrate ?? true,
    maxTransactionAttempts: positiveInteger("maxTransactionAttempts", options.maxTransactionAttempts, 5),
    maxCommitGroupsInFlight: positiveInteger("maxCommitGroupsInFlight", options.maxCommitGroupsInFlight, 2),
    connectTimeoutMs: positiveInteger("connectTimeoutMs", options.connectTimeoutMs, 10_000),
    idleConnectionTimeoutMs: positiveInteger("idleConnectionTimeoutMs", options.idleConnectionTimeoutMs, 300_000),
    idleInTransactionTimeoutMs: positiveInteger("idleInTransactionTimeoutMs", options.idleInTransactionTimeoutMs, 10_000),
    lockTimeoutMs: positiveInteger("lockTimeoutMs", options.lockTimeoutMs, 20_000),
    applicationName: options.applicationName ?? "perdure",
    singleAttemptClaimCommit,
    onError: options.onError ?? ((error) => console.error("perdure postgres store:", error)),
  };
}
