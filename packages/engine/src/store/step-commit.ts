/**
 * The optional one-request operations of the Store contract: a plain Step
 * commit and a flow start, each sent to the database as one request.
 *
 * A store over the network (PostgreSQL) pays a round trip for every answer
 * the engine waits for, and an embedded one (SQLite) pays for the
 * bookkeeping of a general transaction around each statement. The engine's
 * general commit path reads, decides and writes in several steps; for the
 * common Step result — attribute writes, new movements or a completion, no
 * publishes and no cancellations — every decision can be made before the
 * transaction, so the store can fence, write, record history and claim the
 * next tasks in one request. A store that offers these operations must give
 * exactly the rows the general path would; the equivalence tests compare
 * both paths, and the conformance suite runs the general one through the
 * fault-injecting store. A store may leave them out.
 */
import type { AttributeRow, ExecutionRow, FlowRow, MessageRow } from "./store-rows.ts";

/**
 * Method options of one Step method that the store may claim on its own:
 * `[timeoutMs, heartbeatTimeoutMs]`, keyed by {@link claimCatalogKey}. Only
 * methods without locks and without load selections are listed; a queued
 * task of any other method, or one with movement options, stops the store's
 * claim, and the engine claims the rest in a transaction of its own.
 */
export type ClaimCatalog = Readonly<Record<string, ClaimCatalogEntry>>;

/**
 * One method's entry in a {@link ClaimCatalog}. The long form, sent only to
 * a store that offers `OneRequestOperations.claimsLocksAndLoads`, adds the
 * method's lock names (the store takes them, or skips the task while another
 * execution holds one) and whether the Step type selects loads (the Worker
 * reads them after the claim); with it, a task whose movement options are
 * only a load selection is covered too.
 */
export type ClaimCatalogEntry =
  | readonly [timeoutMs: number, heartbeatTimeoutMs: number | null]
  | readonly [timeoutMs: number, heartbeatTimeoutMs: number | null, lockNames: readonly string[], selectsLoads: boolean]
  /** With {@link OneRequestOperations.claimsReadLoads}: the Step type's selection when it is a list, which the claim reads with the movement's loads; an empty list for a load function (the claim reads the movement's loads alone). */
  | readonly [timeoutMs: number, heartbeatTimeoutMs: number | null, lockNames: readonly string[], selectsLoads: boolean, staticLoads: readonly SelectedLoad[] | null];

/** The key of a {@link ClaimCatalog} entry: Flow type, Step type and execution status (`asking` for waitUntil, `ready` for execute). */
export function claimCatalogKey(flowType: string, stepType: string, status: "asking" | "ready"): string {
  return `${flowType} ${stepType} ${status}`;
}

/** The times a lease of a Step method runs on: its method timeout, and its heartbeat timeout if it has one. */
export interface LeaseTimes {
  timeoutMs: number;
  heartbeatTimeoutMs: number | null;
}

/**
 * The catalog's lease times for a queued task whose claim is a lease and
 * whose snapshot is the plain Attributes, or undefined when it is not (not
 * listed, movement options, locks, or load selections).
 */
export function claimLeaseTimesOf(catalog: ClaimCatalog, row: Pick<ExecutionRow, "flowType" | "stepType" | "status" | "movementOptions">): LeaseTimes | undefined {
  if (row.movementOptions !== null) return undefined;
  const entry = catalog[claimCatalogKey(row.flowType, row.stepType, row.status === "asking" ? "asking" : "ready")];
  if (entry === undefined || (entry[2] !== undefined && entry[2].length > 0) || entry[3] === true) return undefined;
  return { timeoutMs: entry[0], heartbeatTimeoutMs: entry[1] };
}

/**
 * `row` leased to `workerId` for its next attempt: the method its status
 * asks for (`asking`: waitUntil, else execute), the next lease token,
 * attempt count and deadlines from the method's times.
 */
export function leasedExecution(row: ExecutionRow, workerId: string, times: LeaseTimes, now: number): ExecutionRow {
  const deadlineAt = now + times.timeoutMs;
  return {
    ...row,
    claimedBy: workerId,
    leaseToken: row.leaseToken + 1,
    attempt: row.attempt + 1,
    executeClaims: row.executeClaims + (row.status === "asking" ? 0 : 1),
    deadlineAt,
    leaseExpiresAt: times.heartbeatTimeoutMs === null ? deadlineAt : Math.min(deadlineAt, now + times.heartbeatTimeoutMs),
  };
}

/**
 * The lease times for handing a commit's one new Step straight to the
 * committing Worker, from the Worker's catalog: undefined when the commit
 * claims nothing or its claim could not take that Step alone. A store hands
 * the Step over only when no other task waits, since a claim takes the
 * oldest first; then the row it writes is the one that claim would write.
 */
export function handoverLeaseTimesOf(commit: StepCommit): LeaseTimes | undefined {
  const movement = commit.movements.length === 1 ? commit.movements[0] : undefined;
  const claim = commit.claim;
  if (movement === undefined || claim === undefined || claim.limit <= 0 || !claim.flowTypes.includes(movement.flowType)) return undefined;
  // Publishes may make another task ready first.
  if ((commit.publishes?.length ?? 0) > 0) return undefined;
  return claimLeaseTimesOf(claim.catalog, movement);
}

/** Which tasks to claim in the same request, for the committing Worker. */
export interface StepCommitClaim {
  flowTypes: readonly string[];
  limit: number;
  catalog: ClaimCatalog;
}

/** A Step method's result with every decision made and every value encoded. */
export interface StepCommit {
  flowId: string;
  executionId: string;
  /** The fence: the commit applies only while the execution is still leased to this Worker with this token. */
  workerId: string;
  leaseToken: number;
  method: "wait_until" | "execute";
  now: number;
  /** When the attempt was claimed (its history entry's start). */
  startedAt: number;
  /** Attribute writes in order; `null` deletes. */
  writes: readonly { name: string; key: string; value: string | null }[];
  /** `execute` only: new executions, numbered by the store from the Flow's next sequence number, in order. */
  movements: readonly Omit<ExecutionRow, "seq" | "executionId">[];
  /** `execute` only: ends the Flow. The store answers `fallback` when the Flow has other executions (they need cancelling). */
  finish: { status: "completed" | "failed"; output: string | null; error: string | null } | null;
  /** `wait_until` only (a wait without conditions): the execution becomes ready with this wait result and retry window. */
  ready: { waitResult: string; expiresAt: number | null } | null;
  /**
   * `wait_until` only, for a store with {@link OneRequestOperations.commitsWaitsAndPublishes}:
   * the conditions `waitUntil` returned, as stored (`StoredConditions` JSON,
   * also the history entry's outcome). The store inserts their Timers, makes
   * the execution wait and matches the wait at once; `expiresAt` is the
   * retry window should it match.
   */
  wait?: StepCommitWait | null;
  /**
   * For a store with {@link OneRequestOperations.commitsWaitsAndPublishes}:
   * publishes in order, each taking the Flow's next sequence number before
   * any movement; the store then matches every waiting execution of the Flow.
   */
  publishes?: readonly { name: string; key: string; value: string }[];
  /**
   * With publishes: each Step type's `execute` retry window (total duration,
   * `null` for none), for the waits that become ready. The store answers
   * `fallback` when a wait that may match has movement options.
   */
  readyTotals?: Readonly<Record<string, number | null>>;
  /**
   * With a wait or publishes: the committing Step's chain place
   * (`continuationPlace`), where the waits this commit completes queue, as
   * the general path's `FlowTransaction.makeReady`. A store without
   * migration 0011 queues them at `now`.
   */
  place?: { availableAt: number; scheduledAt: number };
  /** The history entry's outcome text. */
  outcome: string | null;
  /** The Flow's history retention; 0 records no history. */
  historyKeep: number;
  /** The attempt's method holds locks, which the commit releases. */
  holdsLocks: boolean;
  claim: StepCommitClaim | undefined;
  /**
   * For a store with {@link OneRequestOperations.commitsStreams}: the
   * attempt's last Stream messages, sorted (`sortedStreamBatch`), appended
   * as {@link OneRequestOperations.appendStreams} appends them, in the
   * commit's transaction, only when the commit lands. The store wakes their
   * readers once the commit is in. @default none
   */
  streams?: readonly StreamAppend[];
}

/** A wait with conditions in a {@link StepCommit}. */
export interface StepCommitWait {
  /** The stored conditions' JSON text (`StoredConditions`). */
  conditions: string;
  /** The Flow type, which the Timers' rows carry. */
  flowType: string;
  expiresAt: number | null;
  /** The earliest due time of its Timers that does not fire at once, for the Workers' wake-up. */
  earliestTimerAt: number | undefined;
}

/** One task the store claimed along with a commit: its leased row and the Flow's plain Attributes. */
export interface StoreClaim {
  execution: ExecutionRow;
  plainAttributes: AttributeRow[];
  /**
   * The task's selection read in the claim (a store with
   * {@link OneRequestOperations.claimsReadLoads}, for a catalog entry with
   * static loads): the loads, the Step type's and then the movement's, and
   * what each read.
   */
  selection?: { loads: SelectedLoad[]; loaded: LoadedSelection[] } | undefined;
}

/** What a {@link StepCommit} did. */
export interface StepCommitReply {
  /**
   * `committed`; `fenced` (the lease was lost: nothing written, the claim
   * still ran); `fallback` (the store cannot apply this commit alone —
   * nothing was written or claimed, run the general path).
   */
  outcome: "committed" | "fenced" | "fallback";
  claims: StoreClaim[];
  /** The claim stopped at a task the catalog does not cover, with slots left: claim the rest the general way. */
  claimStopped: boolean;
  /**
   * The claim took every claimable task of the Worker's Flow types it saw,
   * so no other Worker needs waking for them; undefined where the store
   * does not tell (then a claim that took its whole limit wakes them).
   */
  claimedAll?: boolean | undefined;
  /** A commit that ended the Flow: the stored fields the commit did not send, where the store returns them. */
  ended?: { input: string; createdAt: number; updatedAt: number } | undefined;
  /** An execution of the Flow became ready (a new movement, or a wait that was matched), where the store says so. */
  readied?: boolean | undefined;
}

/** A flow start: the Flow row and, when the Flow has a start Step, its first execution (sequence number 1). */
export interface FlowStart {
  flow: FlowRow;
  startExecution: ExecutionRow | null;
}

/** What a {@link FlowStart} did: created the Flow, or found one (which it left alone). */
export type FlowStartReply = { created: true } | { created: false; existing: Pick<FlowRow, "flowType" | "status" | "requestId"> };

/** A claim on its own, as a Worker with free slots makes it. */
export interface TaskClaim {
  workerId: string;
  now: number;
  claim: StepCommitClaim;
}

/** What a {@link TaskClaim} claimed. */
export interface TaskClaimReply {
  claims: StoreClaim[];
  /** As in {@link StepCommitReply}: claim the rest the general way. */
  claimStopped: boolean;
  /** As in {@link StepCommitReply}. */
  claimedAll?: boolean | undefined;
}

/** A Flow row with its unfinished executions (in sequence order), read at one moment. */
export interface FlowRead {
  flow: FlowRow;
  executions: ExecutionRow[];
}

/** The one-request operations a store may offer. */
export interface OneRequestOperations {
  /**
   * The store is embedded: a general transaction costs it no round trip
   * (SQLite). The engine then uses these operations only where they save
   * work. A plain commit whose claim would stop at a task the store cannot
   * claim alone runs the general path, which commits and claims in one
   * transaction, and a Worker's own claims run as general transactions too
   * (a one-request claim that stops would make them two). @default false
   */
  readonly embedded?: boolean;
  /**
   * The store's claims (alone and in a commit) accept the long catalog
   * entries of {@link ClaimCatalogEntry}: they take Step methods' locks and
   * claim tasks whose Step selects loads, which the Worker then reads.
   * @default false
   */
  readonly claimsLocksAndLoads?: boolean;
  /**
   * The store's Step commit takes waits with conditions and publishes
   * ({@link StepCommit.wait}, {@link StepCommit.publishes}): it matches
   * waits as `FlowTransaction` does. @default false
   */
  readonly commitsWaitsAndPublishes?: boolean;
  /**
   * The store's claims accept five-element catalog entries and read a
   * claimed task's static selection (and its movement's loads) in the claim,
   * returning it as `StoreClaim.selection`. @default false
   */
  readonly claimsReadLoads?: boolean;
  /**
   * The store's Step commit appends {@link StepCommit.streams} in its own
   * transaction when it lands (and not when it is fenced or falls back),
   * and its {@link heartbeat} appends {@link LeaseHeartbeat.streams}
   * whether or not the lease is still held. @default false
   */
  readonly commitsStreams?: boolean;
  commitStep(commit: StepCommit): Promise<StepCommitReply>;
  claimTasks(claim: TaskClaim): Promise<TaskClaimReply>;
  startFlow(start: FlowStart): Promise<FlowStartReply>;
  /**
   * Reads a Flow's plain Attributes and what `loads` select, in one
   * statement that locks and writes nothing (one moment, as a read
   * transaction of `Snapshot.load` would). Absent: a read transaction.
   */
  readSelection?(flowId: string, loads: readonly SelectedLoad[]): Promise<SelectionRead>;
  /** Reads a Flow and its executions in one statement that locks and writes nothing; undefined when no Flow has the ID. */
  readFlow(flowId: string): Promise<FlowRead | undefined>;
  /**
   * Reads Attributes of a Flow in one statement that locks and writes
   * nothing: each slot's value in order (undefined when unset), or
   * undefined when no Flow has the ID. Absent: a read transaction.
   */
  readAttributes?(flowId: string, slots: readonly { name: string; key: string }[]): Promise<(string | undefined)[] | undefined>;
  /**
   * Appends one Stream message in one request, trims the Flow type's
   * oldest messages beyond the budget as `StoreTransaction.appendStream`
   * does (in the same transaction), and wakes readers here and in other processes; returns the
   * message's index. The store need not wait for the write to be flushed
   * (a Stream is best-effort, see the decision record on non-durable Stream
   * writes). Absent: a transaction around `StoreTransaction.appendStream`.
   */
  readonly appendStream?: ((append: StreamAppend) => Promise<number>) | undefined;
  /**
   * Appends a batch of one Flow's Stream messages in one request, each as
   * {@link appendStream} appends one, in the batch's order, and wakes the
   * readers of each Stream written; returns the messages' indexes. The
   * caller sorts a batch by Stream name (`sortedStreamBatch`), so batches
   * take their Streams' locks in one order. Absent: one {@link appendStream}
   * per message, or one transaction for the batch.
   */
  readonly appendStreams?: ((batch: readonly StreamAppend[]) => Promise<number[]>) | undefined;
  /**
   * Extends a held lease as one request: fenced by worker and lease token,
   * the new expiry is `now + heartbeatTimeoutMs` capped at the execution's
   * deadline (the deadline itself without a heartbeat timeout), and the
   * checkpoint is stored. False when the attempt no longer holds the lease.
   */
  heartbeat?(heartbeat: LeaseHeartbeat): Promise<boolean>;
  /**
   * Runs an RPC whose plan is publishes ({@link RpcPublish}) as one request,
   * with the rows `invokeRpc`'s transaction would leave: it locks the Flow,
   * publishes in order at the Flow's next sequence numbers, matches every
   * waiting execution oldest first (queued at `now`), and moves the Flow's
   * counter. It writes nothing and answers `fallback` unless the Flow exists
   * with this type and runs, none of `lockNames` is held, `room` holds, and
   * every wait the publishes may complete is one the store matches (no
   * movement options, a Step type in `readyTotals`). Absent: the handler
   * runs in a transaction.
   */
  readonly publishRpc?: ((request: RpcPublish) => Promise<RpcPublishReply>) | undefined;
  /**
   * {@link publishRpc} takes {@link RpcPublish.claim}: when the publishes
   * ready a wait, the same transaction claims one task for that Worker
   * (oldest first, as {@link claimTasks}) and the reply carries the claim.
   * @default false
   */
  readonly claimsInRpcs?: boolean;
}

/** An RPC's publishes as one request (see {@link OneRequestOperations.publishRpc}). */
export interface RpcPublish {
  flowId: string;
  flowType: string;
  now: number;
  /** The RPC's lock names: while a running Step holds one, the answer is `fallback`. */
  lockNames: readonly string[];
  /** Encoded messages, published in order. */
  publishes: readonly { name: string; key: string; value: string }[];
  /** Each Step type's `execute` retry window (total duration, `null` for none), for the waits that become ready. */
  readyTotals: Readonly<Record<string, number | null>>;
  /** The Flow's history retention (history is trimmed as the sequence grows). */
  historyKeep: number;
  /**
   * Publish only while the messages queued on `channels` plus the new ones
   * number at most `maxMessages`, and the UTF-8 bytes of their stored JSON's
   * top-level string `field` total at most `maxBytes`.
   */
  room: { channels: readonly { name: string; key: string }[]; maxMessages: number; maxBytes: number; field: string } | null;
  /**
   * A Worker of the caller's process with a slot free: when a wait becomes
   * ready, the RPC's transaction claims one task for it, as its claims do
   * (see {@link OneRequestOperations.claimsInRpcs}). Only for a store that
   * claims in RPCs.
   */
  claim?: TaskClaim | undefined;
}

/**
 * What {@link OneRequestOperations.publishRpc} did: published (with the
 * message IDs, and whether a wait became ready), or nothing. `woken`: the
 * store already sent the wake-ups the readied task needs, here and in other
 * processes (none, when `claimed` took every claimable task). `claimed`:
 * what the request claimed for {@link RpcPublish.claim}, when a wait became
 * ready.
 */
export type RpcPublishReply =
  | { outcome: "published"; messageIds: string[]; readied: boolean; woken?: boolean; claimed?: TaskClaimReply | undefined }
  | { outcome: "fallback" };

/** One load selection as an execution stores it (the shape of the engine's `StoredLoad`). */
export type SelectedLoad =
  | { kind: "instance"; name: string; key: string }
  | { kind: "range"; name: string; fromKey?: string; toKey?: string; limit?: number }
  | { kind: "channel"; name: string; key: string };

/**
 * One load's result: an instance's stored value (undefined when unset), a
 * range's rows in key order, or a Channel's queued messages in publish order.
 */
export type LoadedSelection = string | undefined | AttributeRow[] | MessageRow[];

/** What {@link OneRequestOperations.readSelection} read: the plain Attributes, and each load's result in order. */
export interface SelectionRead {
  plain: AttributeRow[];
  loaded: LoadedSelection[];
}

/** One Stream message to append (see {@link OneRequestOperations.appendStream}). */
export interface StreamAppend {
  flowId: string;
  flowType: string;
  stream: string;
  value: string;
  writtenAt: number;
  capacityBytes: number;
}

/** One lease extension (see {@link OneRequestOperations.heartbeat}). */
export interface LeaseHeartbeat {
  flowId: string;
  executionId: string;
  workerId: string;
  leaseToken: number;
  now: number;
  heartbeatTimeoutMs: number | null;
  checkpoint: string | null;
  /**
   * For a store with {@link OneRequestOperations.commitsStreams}: Stream
   * messages written so far, sorted, appended in the heartbeat's
   * transaction (held lease or not); the store wakes their readers.
   * @default none
   */
  streams?: readonly StreamAppend[];
}
