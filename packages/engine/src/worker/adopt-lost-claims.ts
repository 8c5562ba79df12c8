import type { FlowCore } from "../flow/flow.ts";
import type { FlowTransaction } from "../flow/flow-transaction.ts";
import { resolveExecutionOptions } from "../step/execution-options.ts";
import type { ExecutionRow, Store } from "../store/store.ts";
import { loadClaimedAttempt, type ClaimedAttempt } from "./claim-tasks.ts";

/** The attempts a Worker adopted, and whether the store showed all of its leases. */
export interface AdoptedClaims {
  adopted: ClaimedAttempt[];
  complete: boolean;
}

/**
 * Finds the attempts the store shows leased to `workerId` that the Worker
 * does not track (their claim committed, but its reply was lost) and reads
 * their snapshots so the Worker can run them under the lease they already
 * hold. The caller must make sure no claim transaction of the Worker is in
 * flight (see `ClaimLedger`), or a claim about to be launched would run twice.
 * Leases that lapsed are left to `recoverLapsed`.
 */
export async function adoptLostClaims(
  store: Store,
  flows: ReadonlyMap<string, FlowCore>,
  workerId: string,
  isTracked: (execution: ExecutionRow) => boolean,
  limit: number,
): Promise<AdoptedClaims> {
  const leased = await store.transaction((transaction) => transaction.findClaimedBy(workerId, limit));
  const adopted: ClaimedAttempt[] = [];
  for (const row of leased) {
    if (isTracked(row)) continue;
    const claim = await adoptOne(store, flows, workerId, row);
    if (claim !== undefined) adopted.push(claim);
  }
  return { adopted, complete: leased.length < limit };
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
