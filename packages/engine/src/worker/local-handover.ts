/**
 * Work a Client's request readies, claimed in that request for a Worker of
 * the same process that hosts the Flow type and has a slot free:
 *
 * - A start: the start execution is inserted already leased to the Worker,
 *   which runs it as soon as the reply comes back (stores that start flows
 *   in one request, `store.oneRequest`; the start Step must be one the store
 *   may claim on its own).
 * - An RPC whose publishes ready a wait: the RPC's transaction claims one
 *   task for the Worker, as its own claims would (PostgreSQL's publish RPC
 *   with migration 0022, and an embedded store's RPC transaction).
 *
 * Either saves the Worker's claim request, its commit, and the wake-up
 * between them. The request runs through the Worker's claim ledger like any
 * claim: a request whose reply is lost (a dropped connection) may have
 * committed the claim, so the Worker puts its claims in doubt and adopts what
 * the store shows leased to it.
 * docs/decisions/2026-12-05-local-start-handover-and-wait-for-flow.md
 * docs/decisions/2026-12-07-rpc-claims-for-a-local-worker.md
 */
import type { FlowCore } from "../flow/flow.ts";
import type { ExecutionRow, Store } from "../store/store.ts";
import { claimLeaseTimesOf, leasedExecution, type FlowStartReply } from "../store/step-commit.ts";
import type { ClaimedAttempt } from "./commit-attempt-types.ts";
import { claimCatalogOf, claimedAttemptOf } from "./one-request-commit.ts";

/** A Worker's side of the handover. */
export interface LocalClaimTaker {
  readonly workerId: string;
  readonly flows: ReadonlyMap<string, FlowCore>;
  /** Holds one free slot; false when none is free (or claims are in doubt). */
  reserveSlot(): boolean;
  /** {@link reserveSlot}, waiting briefly for claims in flight to give back slots they hold. */
  reserveSlotSoon(): Promise<boolean>;
  /**
   * Runs a request that may claim for this Worker through its claim ledger,
   * launches the attempts it resolves to, and gives back the held slot
   * either way. Every reserved slot goes through here.
   */
  runClaim(request: () => Promise<readonly ClaimedAttempt[]>): Promise<void>;
}

const takersByStore = new WeakMap<Store, Set<LocalClaimTaker>>();

/** Offers a Worker's free slots to starts and RPCs made through `store` in this process; returns the function that withdraws them. */
export function offerLocalClaims(store: Store, taker: LocalClaimTaker): () => void {
  let takers = takersByStore.get(store);
  if (takers === undefined) {
    takers = new Set();
    takersByStore.set(store, takers);
  }
  takers.add(taker);
  return () => takers.delete(taker);
}

/** A start that a local Worker will run: its execution row leased to that Worker. */
export interface LocalStartClaim {
  execution: ExecutionRow;
  /** Runs the start request as the Worker's claim; resolves to its reply once a created Flow's start Step is launched. */
  run(request: () => Promise<FlowStartReply>): Promise<FlowStartReply>;
}

/**
 * Leases `startExecution` to a local Worker that hosts the same Flow
 * definition and has a slot free; undefined when none can take it.
 */
export function claimStartLocally(store: Store, flow: FlowCore, startExecution: ExecutionRow, now: number): LocalStartClaim | undefined {
  for (const taker of takersByStore.get(store) ?? []) {
    if (taker.flows.get(flow.flowType) !== flow) continue;
    // The catalog holds the start Step's lease times, as a claim of the store would use them.
    const times = claimLeaseTimesOf(claimCatalogOf(taker.flows).catalog, startExecution);
    if (times === undefined || !taker.reserveSlot()) continue;
    const execution = leasedExecution(startExecution, taker.workerId, times, now);
    const local = localClaimOf(taker);
    return {
      execution,
      run: (request) => local.run<FlowStartReply>(async (progress) => {
        // One request: any failure of it may have committed the lease.
        progress.committing();
        const reply = await request();
        const attempt = reply.created ? claimedAttemptOf(taker.flows, { execution, plainAttributes: [] }, now) : undefined;
        progress.committed(reply);
        return attempt === undefined ? [] : [attempt];
      }),
    };
  }
  return undefined;
}

/** What a request that may claim for a local Worker tells as it goes (see {@link LocalClaim.run}). */
export interface LocalClaimProgress<T> {
  /** From here on a failure may have committed the request, and its claims with it. */
  committing(): void;
  /** The request committed (or answered without claiming) with this result, whatever happens next. */
  committed(result: T): void;
}

/** A local Worker's free slot, held for a request that may claim for it. */
export interface LocalClaim {
  readonly workerId: string;
  /** The Worker's Flow definitions by type: what it may claim. */
  readonly flows: ReadonlyMap<string, FlowCore>;
  /**
   * Runs `request`, which resolves to the attempts it claimed for the
   * Worker (launched before this resolves) and reports its result through
   * `progress`; resolves to that result. A request that throws before
   * `committing` claimed nothing for sure, and its error is thrown. One that
   * throws after may have claimed: the Worker puts its claims in doubt and
   * adopts what the store shows; the error is thrown unless the request had
   * reported its result, which then stands.
   */
  run<T>(request: (progress: LocalClaimProgress<T>) => Promise<readonly ClaimedAttempt[]>): Promise<T>;
}

/**
 * Holds a slot of a local Worker that hosts `flow`'s definition, for a
 * request that may claim for it; undefined when none has one free, even
 * after claims in flight gave back what they hold. The caller must call
 * `run` once.
 */
export async function claimLocally(store: Store, flow: FlowCore): Promise<LocalClaim | undefined> {
  const hosts = [...takersByStore.get(store) ?? []].filter((taker) => taker.flows.get(flow.flowType) === flow);
  // A Worker with a slot free now, before waiting on one whose slots a claim in flight holds.
  const taker = hosts.find((candidate) => candidate.reserveSlot()) ?? await firstReservedSoon(hosts);
  if (taker === undefined) return undefined;
  return localClaimOf(taker);
}

async function firstReservedSoon(hosts: readonly LocalClaimTaker[]): Promise<LocalClaimTaker | undefined> {
  for (const taker of hosts) if (await taker.reserveSlotSoon()) return taker;
  return undefined;
}

/** The held slot of `taker` as a {@link LocalClaim}. */
function localClaimOf(taker: LocalClaimTaker): LocalClaim {
  return {
    workerId: taker.workerId,
    flows: taker.flows,
    async run<T>(request: (progress: LocalClaimProgress<T>) => Promise<readonly ClaimedAttempt[]>): Promise<T> {
      let committing = false;
      let settled: { result: T } | undefined;
      let rolledBack: { error: unknown } | undefined;
      const progress: LocalClaimProgress<T> = {
        committing: () => { committing = true; },
        committed: (result) => { settled = { result }; },
      };
      try {
        await taker.runClaim(async () => {
          try {
            return await request(progress);
          } catch (error) {
            if (committing || settled !== undefined) throw error;
            // Rolled back before its commit: no claim to doubt.
            rolledBack = { error };
            return [];
          }
        });
      } catch (error) {
        // Committed, then the claims failed to launch: the Worker adopts them, and the request's result stands.
        if (settled === undefined) throw error;
      }
      if (rolledBack !== undefined) throw rolledBack.error;
      if (settled === undefined) throw new Error("a local claim's request reported no result");
      return settled.result;
    },
  };
}
