import type { FlowCore } from "../flow/flow.ts";
import { FlowTransaction } from "../flow/flow-transaction.ts";
import { attemptErrorOf, failAttempt, routeFailure } from "./attempt-failure.ts";
import { resolveExecutionOptions, type ExecutionOptions } from "../step/execution-options.ts";
import { methodLoadOf, type ResolvedMethodOptions, type StoredLoad } from "../step/step-options.ts";
import { durableBoundary } from "../internal/durable-boundary.ts";
import { leasedExecution, type OneRequestOperations, type TaskClaimReply } from "../store/step-commit.ts";
import type { ExecutionRow, Store, StoreTransaction } from "../store/store.ts";
import type { ClaimedAttempt } from "./commit-attempt-types.ts";
import { claimCatalogFor, claimedAttemptOf, jsonbRefuses, stepSelectsLoads } from "./one-request-commit.ts";
import { Snapshot } from "./snapshot.ts";

export type { ClaimedAttempt } from "./commit-attempt-types.ts";

/** What one claim transaction produced, and what it changed for others. */
export interface ClaimBatch {
  claims: ClaimedAttempt[];
  changed: FlowTransaction[];
  /**
   * The claim took every claimable task of its Flow types there was (it
   * read fewer candidates than it asked for, and claimed each of them), so
   * waking other Workers finds nothing for them. A task skipped for a lock
   * counts as left, as in PostgreSQL's claim. Absent: unknown.
   */
  claimedAll?: boolean;
}

async function claimOne(
  transaction: StoreTransaction,
  flow: FlowCore,
  row: ExecutionRow,
  workerId: string,
  now: number,
  changed: FlowTransaction[],
): Promise<ClaimedAttempt | undefined> {
  let options: ExecutionOptions;
  try {
    options = resolveExecutionOptions(flow, row.stepType, row.movementOptions);
  } catch (error) {
    // The Step type vanished from the definition: no attempt can ever run.
    const flowTransaction = await FlowTransaction.open(transaction, flow, row.flowId, now);
    if (flowTransaction === undefined) return undefined;
    await routeFailure(flowTransaction, row, { ...attemptErrorOf(error), terminal: true });
    await flowTransaction.close();
    changed.push(flowTransaction);
    return undefined;
  }
  const method = row.status === "asking" ? "wait_until" : "execute";
  const methodOptions = method === "wait_until" ? options.waitUntil : options.execute;
  if (methodOptions.lockNames.length > 0) {
    await transaction.lockFlow(row.flowId);
    if ((await transaction.heldLocks(row.flowId, methodOptions.lockNames)).length > 0) return undefined;
    await transaction.acquireLocks(row.flowId, methodOptions.lockNames, row.executionId);
  }
  const claimed = leasedExecution(row, workerId, methodOptions, now);
  await transaction.updateExecution(row.flowId, row.executionId, {
    claimedBy: claimed.claimedBy,
    leaseToken: claimed.leaseToken,
    attempt: claimed.attempt,
    executeClaims: claimed.executeClaims,
    deadlineAt: claimed.deadlineAt,
    leaseExpiresAt: claimed.leaseExpiresAt,
  });
  return loadClaimedAttempt(transaction, flow, claimed, options, now, changed);
}

/**
 * When `execution`'s lease was taken, on the store's clock: every claim sets
 * its deadline to the claim's time plus the method's timeout, and nothing
 * moves the deadline after. An adopted claim (its reply was lost) and a
 * lapsed one that recovery fails thus record the time of the claim itself
 * as `startedAt`, as the claim's own commit would, and a Worker checking
 * what it started recognises the entry. `fallback` for a row with no
 * deadline.
 */
export function leaseTakenAt(execution: Pick<ExecutionRow, "deadlineAt">, methodOptions: Pick<ResolvedMethodOptions, "timeoutMs">, fallback: number): number {
  return execution.deadlineAt === null ? fallback : execution.deadlineAt - methodOptions.timeoutMs;
}

/**
 * Reads the snapshot of an attempt whose lease `execution` holds. A load
 * selection that throws fails the attempt like a handler would, and nothing
 * is returned.
 */
export async function loadClaimedAttempt(
  transaction: StoreTransaction,
  flow: FlowCore,
  execution: ExecutionRow,
  options: ExecutionOptions,
  now: number,
  changed: FlowTransaction[],
): Promise<ClaimedAttempt | undefined> {
  const method = execution.status === "asking" ? "wait_until" : "execute";
  const methodOptions = method === "wait_until" ? options.waitUntil : options.execute;
  const input: unknown = JSON.parse(execution.input);
  try {
    const snapshot = await Snapshot.load(transaction, flow, execution.flowId, options.step, method, input, options.extraLoads);
    return { flow, execution, options, method, methodOptions, input, snapshot, claimedAt: leaseTakenAt(execution, methodOptions, now) };
  } catch (error) {
    const flowTransaction = await FlowTransaction.open(transaction, flow, execution.flowId, now);
    if (flowTransaction === undefined) return undefined;
    await failAttempt(flowTransaction, execution, attemptErrorOf(error), now);
    await flowTransaction.close();
    changed.push(flowTransaction);
    return undefined;
  }
}

/**
 * Claims up to `limit` queued tasks of the hosted Flow types inside a
 * transaction: lease, attempt count, locks and snapshot together.
 */
export async function claimInTransaction(
  transaction: StoreTransaction,
  flows: ReadonlyMap<string, FlowCore>,
  workerId: string,
  limit: number,
  now: number,
): Promise<ClaimBatch> {
  const batch: ClaimBatch = { claims: [], changed: [] };
  if (limit <= 0) return batch;
  // A few spare candidates cover tasks skipped for busy locks.
  const asked = limit + 4;
  const candidates = await transaction.findClaimable([...flows.keys()], now, asked);
  for (const row of candidates) {
    if (batch.claims.length >= limit) break;
    const flow = flows.get(row.flowType);
    if (flow === undefined) continue;
    const claim = await claimOne(transaction, flow, row, workerId, now, batch.changed);
    if (claim !== undefined) batch.claims.push(claim);
  }
  batch.claimedAll = candidates.length < asked && batch.claims.length === candidates.length;
  return batch;
}

/**
 * Marks a claim transaction's durable boundary, named after its first claim.
 * Only a claim that changes something is a boundary: an idle Worker polls
 * with empty ones.
 */
export function markClaimBoundary(name: "worker.claim.before-commit" | "worker.claim.after-commit", batch: ClaimBatch): void {
  const execution = batch.claims[0]?.execution;
  if (execution !== undefined) durableBoundary(name, execution.flowId, execution.stepType);
  else if (batch.changed[0] !== undefined) durableBoundary(name, batch.changed[0].flowId);
}

/**
 * Completes the snapshots of attempts a store's one-request claim took with
 * only their plain Attributes (see `OneRequestOperations.claimsLocksAndLoads`):
 * each attempt whose Step or movement selects loads reads its snapshot in a
 * read of its own, after the claim committed, under the lease (and any locks)
 * the claim took. A load selection that throws fails the attempt, as it
 * would inside a claim transaction, and the attempt is left out.
 */
export async function loadSelectedSnapshots(store: Store, workerId: string, attempts: ClaimedAttempt[]): Promise<ClaimedAttempt[]> {
  if (!attempts.some(selectsLoads)) return attempts;
  const loaded = await Promise.all(attempts.map(async (attempt): Promise<ClaimedAttempt | undefined> => {
    if (!selectsLoads(attempt)) return attempt;
    const { flow, execution, options, input } = attempt;
    try {
      const selected = await readSelectionInOneRequest(store, attempt);
      if (selected !== undefined) return { ...attempt, snapshot: selected };
      const read = store.read === undefined ? store.transaction.bind(store) : store.read.bind(store);
      const snapshot = await read((transaction) => Snapshot.load(transaction, flow, execution.flowId, options.step, attempt.method, input, options.extraLoads));
      return { ...attempt, snapshot };
    } catch (error) {
      const failed = await store.transaction(async (transaction) => {
        const current = await transaction.getExecution(execution.flowId, execution.executionId);
        if (current === undefined || current.claimedBy !== workerId || current.leaseToken !== execution.leaseToken) return undefined;
        const flowTransaction = await FlowTransaction.open(transaction, flow, execution.flowId, store.clock.now());
        if (flowTransaction === undefined) return undefined;
        await failAttempt(flowTransaction, current, attemptErrorOf(error), attempt.claimedAt);
        await flowTransaction.close();
        return flowTransaction;
      });
      failed?.announce(store);
      return undefined;
    }
  }));
  return loaded.filter((attempt) => attempt !== undefined);
}

/**
 * The snapshot `Snapshot.load` would read, in one statement of the store's
 * `readSelection`; undefined when the store has none, or when a load
 * function chose its selection from plain Attributes (those of the claim)
 * that differ from the ones the statement read, or threw on them. Then the
 * read transaction decides, exactly as before.
 */
async function readSelectionInOneRequest(store: Store, attempt: ClaimedAttempt): Promise<Snapshot | undefined> {
  const oneRequest = store.oneRequest;
  if (oneRequest?.readSelection === undefined) return undefined;
  const { flow, execution, options, input } = attempt;
  const dynamic = typeof methodLoadOf(options.step.options, attempt.method) === "function";
  let loads: StoredLoad[];
  try {
    loads = Snapshot.selectedLoads(options.step, attempt.method, input, attempt.snapshot, options.extraLoads);
  } catch {
    return undefined;
  }
  // A key jsonb cannot hold: the read transaction reads it.
  if (jsonbRefuses(JSON.stringify(loads))) return undefined;
  const read = await oneRequest.readSelection(execution.flowId, loads);
  if (dynamic && !attempt.snapshot.holdsPlainAttributes(read.plain)) return undefined;
  return Snapshot.ofLoaded(flow, read.plain, loads, read.loaded);
}

function selectsLoads(attempt: ClaimedAttempt): boolean {
  if (attempt.snapshotLoaded === true) return false;
  if (attempt.options.extraLoads.length > 0) return true;
  if (!stepSelectsLoads(attempt.options.step, attempt.method)) return false;
  const load = methodLoadOf(attempt.options.step.options, attempt.method);
  if (typeof load !== "function") return true;
  // A load function that selects nothing on the claim's own plain Attributes: the claim's snapshot is the whole of it.
  try {
    return load(attempt.input, attempt.snapshot).length > 0;
  } catch {
    // The read after the claim reports it, as it always did.
    return true;
  }
}

/**
 * The attempts a committed one-request claim (`claimTasks`, or an RPC's
 * claim) took, with their snapshots complete: those whose Step or movement
 * selects loads the claim did not read are read now, under the lease.
 */
export async function attemptsOfClaimReply(store: Store, flows: ReadonlyMap<string, FlowCore>, workerId: string, reply: TaskClaimReply, now: number): Promise<ClaimedAttempt[]> {
  const claimed: ClaimedAttempt[] = [];
  for (const row of reply.claims) {
    const attempt = claimedAttemptOf(flows, row, now);
    if (attempt !== undefined) claimed.push(attempt);
  }
  markClaimBoundary("worker.claim.after-commit", { claims: claimed, changed: [] });
  return loadSelectedSnapshots(store, workerId, claimed);
}

/**
 * Claims in one request of a store's one-request operations, while the tasks in
 * line are plain (see `store/step-commit.ts`); the rest in a transaction.
 * The request is the commit, so only its after-commit boundary is marked.
 */
async function claimInOneRequest(store: Store, oneRequest: OneRequestOperations, flows: ReadonlyMap<string, FlowCore>, workerId: string, limit: number): Promise<ClaimBatch> {
  const now = store.clock.now();
  const { flowTypes, catalog } = claimCatalogFor(flows, oneRequest);
  const reply = await oneRequest.claimTasks({ workerId, now, claim: { flowTypes, catalog, limit } });
  const batch: ClaimBatch = { claims: await attemptsOfClaimReply(store, flows, workerId, reply, now), changed: [] };
  if (reply.claimStopped && batch.claims.length < limit) {
    const rest = await claimTasks(store, flows, workerId, limit - batch.claims.length, { general: true });
    batch.claims.push(...rest.claims);
    batch.changed.push(...rest.changed);
  }
  return batch;
}

/** Claims up to `limit` queued tasks in one short transaction of its own. */
export async function claimTasks(store: Store, flows: ReadonlyMap<string, FlowCore>, workerId: string, limit: number, how: { general?: boolean } = {}): Promise<ClaimBatch> {
  // An embedded store claims in a general transaction, which takes whatever is next in line at once.
  if (store.oneRequest !== undefined && store.oneRequest.embedded !== true && how.general !== true && limit > 0) return claimInOneRequest(store, store.oneRequest, flows, workerId, limit);
  const now = store.clock.now();
  const batch = await store.transaction(async (transaction) => {
    const claimed = await claimInTransaction(transaction, flows, workerId, limit, now);
    markClaimBoundary("worker.claim.before-commit", claimed);
    return claimed;
  });
  markClaimBoundary("worker.claim.after-commit", batch);
  return batch;
}
