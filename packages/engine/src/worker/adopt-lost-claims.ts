import type { FlowCore } from "../flow/flow.ts";
import { claimableSince, FlowTransaction } from "../flow/flow-transaction.ts";
import { failAttempt, type AttemptError } from "./attempt-failure.ts";
import { resolveExecutionOptions } from "../step/execution-options.ts";
import type { ExecutionRow, Store } from "../store/store.ts";
import { loadClaimedAttempt, type ClaimedAttempt } from "./claim-tasks.ts";

/** The attempts a Worker adopted, and whether the store showed all of its leases. */
export interface AdoptedClaims {
  adopted: ClaimedAttempt[];
  /** Attempts this Worker had already run and committed that the store shows leased again: recorded as failed with `CommitLost`. */
  lostCommits: ExecutionRow[];
  complete: boolean;
}

/** The error of an attempt whose confirmed commit the store no longer has. */
export function commitLostError(row: ExecutionRow): AttemptError {
  return {
    type: "CommitLost",
    message: `attempt ${row.attempt} of ${row.stepType} had committed, but the store shows it running again: the database lost committed work `
      + "(a failover to a standby that had not received it?), so whether its effects happened is unknown and it is not run again",
    terminal: false,
  };
}

/**
 * Finds the attempts the store shows leased to `workerId` that the Worker
 * does not track (their claim committed, but its reply was lost) and reads
 * their snapshots so the Worker can run them under the lease they already
 * hold. The caller must make sure no claim transaction of the Worker is in
 * flight (see `ClaimLedger`), or a claim about to be launched would run twice.
 * Leases that lapsed are left to `recoverLapsed`. A lease the Worker had
 * already run to a confirmed commit (`wasRun`) is not adopted: the database
 * lost that commit, so the attempt is failed with `CommitLost` instead (a
 * single-attempt Step then ends with its outcome unknown).
 */
export async function adoptLostClaims(
  store: Store,
  flows: ReadonlyMap<string, FlowCore>,
  workerId: string,
  isTracked: (execution: ExecutionRow) => boolean,
  limit: number,
  wasRun: (execution: ExecutionRow) => boolean = () => false,
): Promise<AdoptedClaims> {
  const leased = await store.transaction((transaction) => transaction.findClaimedBy(workerId, limit));
  const adopted: ClaimedAttempt[] = [];
  const lostCommits: ExecutionRow[] = [];
  for (const row of leased) {
    if (isTracked(row)) continue;
    // Not a claim whose reply was lost: this Worker ran this very lease and its commit was confirmed.
    if (wasRun(row)) {
      if (await failLostCommit(store, flows, workerId, row)) lostCommits.push(row);
      continue;
    }
    const claim = await adoptOne(store, flows, workerId, row);
    if (claim !== undefined) adopted.push(claim);
  }
  return { adopted, lostCommits, complete: leased.length < limit };
}

/** Fails an attempt whose commit the store lost, under the same lease, so it is never run again as new. */
export async function failLostCommit(store: Store, flows: ReadonlyMap<string, FlowCore>, workerId: string, lost: ExecutionRow): Promise<boolean> {
  const flow = flows.get(lost.flowType);
  if (flow === undefined) return false;
  const now = store.clock.now();
  const changed: FlowTransaction[] = [];
  const failed = await store.transaction(async (transaction) => {
    const current = await transaction.getExecution(lost.flowId, lost.executionId);
    if (current?.claimedBy !== workerId || current.leaseToken !== lost.leaseToken) return false;
    const flowTransaction = await FlowTransaction.open(transaction, flow, lost.flowId, now);
    if (flowTransaction === undefined) return false;
    await failAttempt(flowTransaction, current, commitLostError(current), claimableSince(current));
    await flowTransaction.close();
    changed.push(flowTransaction);
    return true;
  });
  for (const flowTransaction of changed) flowTransaction.announce(store);
  return failed;
}

/** Adopts one lost claim in a transaction of its own, which locks only its Flow. */
async function adoptOne(store: Store, flows: ReadonlyMap<string, FlowCore>, workerId: string, lost: ExecutionRow): Promise<ClaimedAttempt | undefined> {
  const flow = flows.get(lost.flowType);
  if (flow === undefined) return undefined;
  const now = store.clock.now();
  const { claim, changed } = await store.transaction(async (transaction) => {
    const changed: FlowTransaction[] = [];
    const current = await transaction.getExecution(lost.flowId, lost.executionId);
    // Cancelled, recovered, or lapsed meanwhile: nothing to adopt.
    const isSameLease = current?.claimedBy === workerId && current.leaseToken === lost.leaseToken;
    if (!isSameLease || (current.leaseExpiresAt !== null && current.leaseExpiresAt <= now)) return { claim: undefined, changed };
    const options = resolveExecutionOptions(flow, current.stepType, current.movementOptions);
    return { claim: await loadClaimedAttempt(transaction, flow, current, options, now, changed), changed };
  });
  for (const flowTransaction of changed) flowTransaction.announce(store);
  return claim;
}
