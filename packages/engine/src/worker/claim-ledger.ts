import type { ClaimedAttempt } from "./claim-tasks.ts";

/** What a {@link ClaimLedger} asks of its Worker. */
export interface ClaimLedgerHooks {
  /** Starts running an attempt the Worker holds the lease on. */
  launch(claim: ClaimedAttempt): void;
  /**
   * Launches every attempt the store shows leased to the Worker that it does
   * not run; resolves to true when it found them all.
   */
  adoptLostClaims(): Promise<boolean>;
  /** Claiming may resume: wake the claim loop. */
  resume(): void;
  onError(error: unknown): void;
}

/**
 * Keeps a Worker's claims accounted for when a transaction that claims tasks
 * (a claim of the Worker loop, or a commit that claims the next tasks) fails
 * after its COMMIT reached the database: the claims hold, but the Worker
 * never saw them, so without this they would sit leased to a live Worker
 * until their method timeout.
 *
 * A claim transaction that returns has its claims launched before the ledger
 * counts it settled. One that fails puts the Worker's claims in doubt: no new
 * claim transaction starts (callers ask {@link ClaimLedger.claimable}), and
 * once the ones in flight have settled, the Worker's running attempts are
 * every claim it knows of. Whatever else the store shows leased to the
 * Worker was lost and is adopted; then claiming resumes. While no claim
 * transaction fails, this costs no query.
 *
 * @example
 * const limit = ledger.claimable(freeSlots);
 * if (limit > 0) await ledger.run(limit, () => claimTasks(store, flows, workerId, limit).then((batch) => batch.claims));
 */
export class ClaimLedger {
  private readonly hooks: ClaimLedgerHooks;
  /** Claim transactions started and not yet settled. */
  private inFlight = 0;
  /** Slots the claim transactions in flight may fill, beyond those their Worker already counts busy. */
  private heldSlots = 0;
  private inDoubt = false;
  private adopting = false;
  /** Called once when the next claim transaction in flight settles. */
  private settleWaiters: (() => void)[] = [];

  constructor(hooks: ClaimLedgerHooks) {
    this.hooks = hooks;
  }

  /** How many of `free` slots a claim transaction may fill now: none while claims are in doubt. */
  claimable(free: number): number {
    return this.inDoubt ? 0 : Math.max(0, free);
  }

  /**
   * Slots that claim transactions in flight may still fill: a Worker counts
   * them busy, or two claims that overlap (a commit's and the claim loop's,
   * say) would each fill the same free slot.
   */
  get held(): number {
    return this.heldSlots;
  }

  /**
   * Runs a transaction that claims up to `limit` tasks, a number that
   * {@link ClaimLedger.claimable} just gave, and launches what it claimed.
   * It holds `holds` slots (by default `limit`) until then; a commit's claim
   * holds one fewer while its own attempt's slot is still counted, and
   * takes that slot over with `hold(1)` when the attempt ends. A failure
   * puts the claims in doubt when `limit` allowed any.
   */
  async run(limit: number, transaction: (hold: (slots: number) => void) => Promise<readonly ClaimedAttempt[]>, holds = limit): Promise<readonly ClaimedAttempt[]> {
    const mayClaim = limit > 0;
    if (mayClaim) this.inFlight += 1;
    let held = holds;
    this.heldSlots += held;
    const hold = (slots: number) => {
      held += slots;
      this.heldSlots += slots;
    };
    try {
      const claims = await transaction(hold);
      for (const claim of claims) this.hooks.launch(claim);
      return claims;
    } catch (error) {
      // No error tells whether COMMIT reached the database.
      if (mayClaim) this.inDoubt = true;
      throw error;
    } finally {
      this.heldSlots -= held;
      if (mayClaim) {
        this.inFlight -= 1;
        this.adoptWhenSettled();
      }
      const waiters = this.settleWaiters;
      this.settleWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }

  /** Calls `waiter` once when the next claim transaction in flight settles (its held slots given back); returns a function that forgets it. */
  onNextSettle(waiter: () => void): () => void {
    this.settleWaiters.push(waiter);
    return () => {
      this.settleWaiters = this.settleWaiters.filter((each) => each !== waiter);
    };
  }

  /**
   * Puts the Worker's claims in doubt without a failed claim transaction:
   * the store went back in time (a failover lost commits), so it may show
   * leases to this Worker that it no longer tracks. A Worker whose slots were
   * all busy during the outage sent no claim that could fail.
   */
  doubt(): void {
    this.inDoubt = true;
    this.adoptWhenSettled();
  }

  /** Adopts lost claims once no claim transaction is in flight; the Worker calls it on each maintenance tick, to retry. */
  adoptWhenSettled(): void {
    if (this.inDoubt && this.inFlight === 0 && !this.adopting) void this.adopt();
  }

  private async adopt(): Promise<void> {
    this.adopting = true;
    try {
      if (await this.hooks.adoptLostClaims()) {
        this.inDoubt = false;
        this.hooks.resume();
      }
    } catch (error) {
      // Still in doubt: the next maintenance tick tries again.
      this.hooks.onError(error);
    } finally {
      this.adopting = false;
    }
  }
}
