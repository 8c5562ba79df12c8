/**
 * The Store contract: everything the engine needs from a database.
 *
 * A store offers transactions of row-level operations, all keyed by flow ID
 * first, plus wake-up notifications between processes. The engine's semantics
 * (condition matching, fencing, retries, cancellation) are written once on top
 * of this contract, so every store behaves the same; the conformance suite in
 * `@perdure/engine/testing` proves it.
 */
import type { FlowRow, ExecutionStatus, ExecutionRow, ExecutionLease, AttributeRow, MessageRow, TimerRow, HistoryRow, StreamRow, ListFlowsFilter } from "./store-rows.ts";
import type { OneRequestOperations, StreamAppend } from "./step-commit.ts";
import type { StoreClock } from "./store-clock.ts";
export type { FlowRow, ExecutionStatus, ExecutionRow, ExecutionLease, AttributeRow, MessageRow, TimerRow, HistoryRow, StreamRow, ListFlowsFilter } from "./store-rows.ts";

/** Row-level operations inside one store transaction. */
export interface StoreTransaction {
  /** Reads a Flow row and, on stores that need it, locks it so commits of one Flow serialize. */
  lockFlow(flowId: string): Promise<FlowRow | undefined>;
  insertFlow(row: FlowRow): Promise<void>;
  updateFlow(flowId: string, fields: Partial<Pick<FlowRow, "status" | "output" | "error" | "updatedAt" | "nextSeq">>): Promise<void>;
  listFlows(filter: ListFlowsFilter): Promise<FlowRow[]>;

  readPlainAttributes(flowId: string): Promise<AttributeRow[]>;
  readAttribute(flowId: string, name: string, key: string): Promise<string | undefined>;
  readAttributeRange(flowId: string, name: string, range: { fromKey?: string; toKey?: string; limit?: number }): Promise<AttributeRow[]>;
  /** `null` deletes. */
  writeAttribute(flowId: string, name: string, key: string, value: string | null): Promise<void>;

  insertMessage(flowId: string, row: MessageRow): Promise<void>;
  listMessages(flowId: string, channel: string, key: string, limit?: number): Promise<MessageRow[]>;
  /** Returns false when no such message is queued. */
  deleteMessage(flowId: string, messageId: string): Promise<boolean>;

  insertExecution(row: ExecutionRow): Promise<void>;
  getExecution(flowId: string, executionId: string): Promise<ExecutionRow | undefined>;
  /**
   * Only the lease columns of an execution: a commit's fence, which already
   * holds the row it claimed. Optional: without it the engine reads the
   * whole row with {@link getExecution}.
   */
  readLease?(flowId: string, executionId: string): Promise<ExecutionLease | undefined>;
  updateExecution(flowId: string, executionId: string, fields: Partial<ExecutionRow>): Promise<void>;
  deleteExecution(flowId: string, executionId: string): Promise<void>;
  /** Every unfinished execution of the Flow (only those in `status` when given), oldest first. */
  listExecutions(flowId: string, status?: ExecutionStatus): Promise<ExecutionRow[]>;
  /** Queued tasks of these Flow types, available now, oldest first; claims on other rows are not blocked. */
  findClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]>;
  /** How many tasks of these Flow types are claimable at `now`, counting at most `limit`; locks nothing (the ready-queue depth metric). */
  countClaimable(flowTypes: readonly string[], now: number, limit: number): Promise<number>;
  /** Claimed executions whose lease lapsed or whose Worker's liveness lapsed. */
  findLapsedLeases(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]>;
  /**
   * Executions leased to `workerId`, in no particular order. A Worker asks
   * after a claim transaction failed, to find claims that committed although
   * their reply was lost. It reads what is committed and locks nothing.
   */
  findClaimedBy(workerId: string, limit: number): Promise<ExecutionRow[]>;
  /** Queued executions whose retry window closed. */
  findExpiredQueued(flowTypes: readonly string[], now: number, limit: number): Promise<ExecutionRow[]>;

  /** Of `names`, those held by any execution of the Flow. */
  heldLocks(flowId: string, names: readonly string[]): Promise<string[]>;
  acquireLocks(flowId: string, names: readonly string[], executionId: string): Promise<void>;
  releaseLocks(flowId: string, executionId: string): Promise<void>;

  insertTimer(row: TimerRow): Promise<void>;
  listTimers(flowId: string, executionId: string): Promise<TimerRow[]>;
  findTimersById(flowId: string, timerId: string): Promise<TimerRow[]>;
  deleteTimers(flowId: string, executionId: string): Promise<void>;
  /** Unfired timers of these Flow types due by `now`, earliest first. */
  findDueTimers(flowTypes: readonly string[], now: number, limit: number): Promise<TimerRow[]>;
  markTimerFired(flowId: string, executionId: string, timerId: string, now: number): Promise<void>;
  nextTimerDueAt(flowTypes: readonly string[]): Promise<number | undefined>;

  appendHistory(row: HistoryRow): Promise<void>;
  /** Deletes the Flow's entries older than its newest `keep`. */
  trimHistory(flowId: string, keep: number): Promise<void>;
  listHistory(flowId: string, limit: number): Promise<HistoryRow[]>;

  /** Appends to a Stream and trims the Flow type's oldest messages beyond `capacityBytes`. */
  appendStream(flowId: string, flowType: string, stream: string, value: string, writtenAt: number, capacityBytes: number): Promise<number>;
  /**
   * Appends a batch of one Flow's messages, sorted by Stream, each as
   * {@link appendStream} does, in one request: every Stream head before any
   * byte count, the lock order of the store's commits and batches. Absent:
   * one {@link appendStream} per message.
   */
  readonly appendStreams?: ((batch: readonly StreamAppend[]) => Promise<number[]>) | undefined;
  /** Messages with index > `afterIndex`, oldest first, and the oldest retained index. */
  readStream(flowId: string, stream: string, afterIndex: number, limit: number): Promise<{ rows: StreamRow[]; firstIndex: number | undefined; lastIndex: number }>;
  /** The newest `limit` messages, oldest first. */
  recentStream(flowId: string, stream: string, limit: number): Promise<StreamRow[]>;

  /** Marks a Worker alive until `expiresAt`. */
  touchWorker(workerId: string, expiresAt: number): Promise<void>;
  removeWorker(workerId: string): Promise<void>;
}

/** A change other processes may want to react to at once. */
export type WakeEvent =
  /** A task becomes claimable at `at` (epoch ms). */
  | { kind: "tasks"; at: number }
  /** A Timer was set (or skipped) that falls due at `dueAt`. */
  | { kind: "timers"; dueAt: number }
  | { kind: "stream"; flowId: string; stream: string }
  | { kind: "executions_cancelled"; flowId: string }
  /** A Flow instance ended: completed, failed or stopped. */
  | { kind: "flow_finished"; flowId: string };

/** The lease of one claimed attempt, as {@link Store.confirmClaim} checks it. */
export interface ClaimLease {
  flowId: string;
  executionId: string;
  workerId: string;
  leaseToken: number;
}

/** A database the engine runs on. */
export interface Store {
  /** Short name for logs and errors, such as `sqlite` or `postgres`. */
  readonly kind: string;
  /** Largest encoded value (Attribute, message, input, output) a commit accepts. */
  readonly maxValueBytes: number;
  /** How often Workers poll for work from other processes, in milliseconds. */
  readonly pollIntervalMs: number;
  /**
   * The clock every durable timestamp of this store is read from, so that
   * processes sharing the store compare leases, liveness and Timers on one
   * clock. Local waits (poll intervals, backoff sleeps) use local timers.
   */
  readonly clock: StoreClock;
  /**
   * One-request forms of a plain Step commit and of a flow start, for stores
   * that pay a round trip per statement (see `step-commit.ts`). Absent: the
   * engine uses {@link transaction} for everything.
   */
  readonly oneRequest?: OneRequestOperations | undefined;
  /** Runs `work` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult>;
  /**
   * Runs `work`, which only reads, on one consistent view of the data,
   * without the Flow locks a {@link transaction} takes: a Worker's claim
   * never passes a Flow over, and no commit waits, because someone is
   * reading it. Absent: reads run as transactions.
   */
  read?<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult>;
  /** Tells this process and, where the store can, other processes about a change. */
  wake(event: WakeEvent): void;
  /** Listens for wake events; returns the function that stops listening. */
  subscribe(listener: (event: WakeEvent) => void): () => void;
  /**
   * A position that only grows as the store commits (PostgreSQL's WAL
   * position). A Worker remembers the highest it saw and reports a store
   * that went back in time when it falls. Absent: not checked.
   */
  commitPosition?(): Promise<bigint>;
  /**
   * Called by a Worker just before it starts a single-attempt attempt (an
   * `execute` whose `retry.maximumAttempts` is 1, such as a
   * `non_idempotent_write` tool call): true when the store still shows the
   * lease, in a commit that returns only once everything committed before it,
   * the claim among it, is as safe from a failover as the store makes it
   * (PostgreSQL: that commit raises `synchronous_commit`, so it waits for the
   * synchronous standbys). False: the store no longer shows the lease
   * (cancelled, taken over, or forgotten by a failover); the attempt must not
   * start. Throws when it cannot tell; the Worker asks again and starts
   * nothing meanwhile. Absent: single-attempt attempts start at once.
   */
  readonly confirmClaim?: ((lease: ClaimLease) => Promise<boolean>) | undefined;
  /** A secret of this store, used to sign resume tokens. */
  tokenSecret(): Promise<Buffer>;
  close(): Promise<void>;
}
