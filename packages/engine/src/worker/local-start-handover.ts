/**
 * A Flow started in a process whose Worker hosts it, with a slot free, is
 * claimed by that Worker in the start's own request: the start execution is
 * inserted already leased to the Worker, which runs it as soon as the reply
 * comes back. That saves the claim's round trip and its WAL flush, and the
 * wake-up between them. Only stores that start flows in one request
 * (`store.oneRequest`) take this path; the start Step must be one the store may
 * claim on its own (in the Worker's claim catalog).
 *
 * A start whose reply is lost (a dropped connection) may have committed the
 * claim: it runs through the Worker's claim ledger like any claim, so the
 * Worker puts its claims in doubt and adopts what the store shows leased to it.
 * docs/decisions/2026-12-05-local-start-handover-and-wait-for-flow.md
 */
import type { FlowCore } from "../flow/flow.ts";
import type { ExecutionRow, Store } from "../store/store.ts";
import { claimLeaseTimesOf, leasedExecution, type FlowStartReply } from "../store/step-commit.ts";
import { claimCatalogOf } from "./one-request-commit.ts";

/** A Worker's side of the handover. */
export interface LocalStartTaker {
  readonly workerId: string;
  readonly flows: ReadonlyMap<string, FlowCore>;
  /** Holds one free slot for a start; false when none is free (or claims are in doubt). */
  reserveSlot(): boolean;
  /**
   * Runs the start request as a claim of this Worker (through its claim
   * ledger) and launches the execution it resolves to, leased to this Worker
   * with no Attributes yet; gives back the held slot either way. Every
   * reserved slot goes through here.
   */
  runClaim(request: () => Promise<ExecutionRow | undefined>, now: number): Promise<void>;
}

const takersByStore = new WeakMap<Store, Set<LocalStartTaker>>();

/** Offers a Worker's free slots to starts made through `store` in this process; returns the function that withdraws them. */
export function offerLocalStarts(store: Store, taker: LocalStartTaker): () => void {
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
  const takers = takersByStore.get(store);
  if (takers === undefined) return undefined;
  for (const taker of takers) {
    if (taker.flows.get(flow.flowType) !== flow) continue;
    // The catalog holds the start Step's lease times, as a claim of the store would use them.
    const times = claimLeaseTimesOf(claimCatalogOf(taker.flows).catalog, startExecution);
    if (times === undefined || !taker.reserveSlot()) continue;
    const execution = leasedExecution(startExecution, taker.workerId, times, now);
    return {
      execution,
      async run(request) {
        let reply: FlowStartReply | undefined;
        await taker.runClaim(async () => {
          reply = await request();
          return reply.created ? execution : undefined;
        }, now);
        if (reply === undefined) throw new Error("a local start's request did not run");
        return reply;
      },
    };
  }
  return undefined;
}
