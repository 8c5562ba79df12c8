import { randomUUID } from "node:crypto";
import { failedAttemptLogFields, failedAttemptMessage, type FailedAttempt } from "./failed-attempt.ts";
import type { PerdureLogger } from "../logging/perdure-logger.ts";
import type { FlowCore } from "../flow/flow.ts";
import { StoreClosedError } from "../errors/store-closed-error.ts";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { ExecutionRow, Store, StoreTransaction, WakeEvent } from "../store/store.ts";
import { fireDueTimers } from "./fire-due-timers.ts";
import { adoptLostClaims, failLostCommit } from "./adopt-lost-claims.ts";
import { findLostAttempts, inputKeyOf, isSameExecution, StartedAttempts, type LostAttempt, type StartedAttempt } from "./lost-attempts.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import { claimTasks, type ClaimBatch, type ClaimedAttempt } from "./claim-tasks.ts";
import { offerLocalClaims } from "./local-handover.ts";
import { noteLocalAttempt } from "../flow/local-attempts.ts";
import { timersOf, type LocalTimers } from "../internal/local-timers.ts";
import { recoverLapsed } from "./recover-lapsed.ts";
import { releaseAttempt, workerReleasedError } from "./release-attempt.ts";
import { runAttempt } from "./run-attempt.ts";
import type { RunningAttempt } from "./running-attempt.ts";
import { StoreContact } from "./store-contact.ts";
import { readyQueueCountLimit, WorkerMetrics } from "./worker-metrics.ts";
import { streamFlushWindowMs } from "./attempt-stream-writer.ts";
import type { MeterProvider } from "@opentelemetry/api";

/** An `execute` that runs at most once (`retry.maximumAttempts` 1): its claim is confirmed before it starts (see `Store.confirmClaim`). */
function isSingleAttempt(claim: ClaimedAttempt): boolean {
  return claim.method === "execute" && claim.methodOptions.retry.maximumAttempts === 1;
}

/** Options of {@link Worker}. */
export interface WorkerOptions {
  store: Store;
  /** Flow definitions this Worker runs. */
  flows: readonly FlowCore[];
  /**
   * Step methods run at once.
   * @default 8
   */
  concurrency?: number;
  /** @default a random UUID */
  workerId?: string;
  /**
   * How long this Worker counts as alive after its last liveness write. When
   * it lapses (the process died), other Workers reclaim its attempts.
   * @default 5000
   */
  livenessTimeoutMs?: number;
  /**
   * Fallback poll for work from other processes.
   * @default the store's `pollIntervalMs`
   */
  pollIntervalMs?: number;
  /**
   * The structured logger (pino, or any {@link PerdureLogger}) for the
   * Worker's errors and for every failed Step attempt (`flowId`, `flowType`,
   * `stepType`, `executionId`, `method`, `attempt`, `err` with its stack),
   * unless `onError` / `onAttemptFailed` take those over.
   * @default none: errors go to `console.error`, failed attempts are not logged
   */
  logger?: PerdureLogger;
  /** Called once for each error the Worker cannot hand to a Step. @default `logger.error`, else logs to stderr */
  onError?: (error: unknown) => void;
  /**
   * Called for every Step method attempt that throws or times out, with the
   * thrown value and its stack, before it is retried or routed (`perdure dev`
   * logs these). Must not throw; what it throws goes to `onError`.
   * @default `logger.error` when a logger is given, else none
   */
  onAttemptFailed?: (failure: FailedAttempt) => void;
  /**
   * Where the Worker's metrics go (`perdure.step.*`, `perdure.lease.takeovers`,
   * `perdure.worker.slots.*`; see docs/operations.md).
   * @default the global MeterProvider of `@opentelemetry/api` when it is installed (a no-op until an SDK registers one)
   */
  meterProvider?: MeterProvider;
  /**
   * How long a Step's Stream write may wait in the Worker for others to join
   * it in one store write: the most a live reader lags the Step, besides
   * that write. Whatever is still waiting when the Step returns goes with
   * its commit, so a Step that returns within the window makes no Stream
   * write of its own. 0 sends each write as soon as the batch before it landed.
   * @default 20
   */
  streamBatchWindowMs?: number;
}

/** Options of {@link Worker.close}. */
export interface WorkerCloseOptions {
  /**
   * How long running attempts may take to finish after claiming stopped.
   * Attempts still running then are released: each is recorded as a failed
   * attempt of type `WorkerReleased` (it counts as an attempt, so a Step
   * with one attempt left goes to its failure route) and queued again
   * without backoff, so another Worker takes it at once. Their handlers get
   * an aborted `signal`; whatever they return later is discarded. Release
   * only when the process is about to exit: a handler that ignores its
   * signal keeps running beside the attempt that replaces it. A
   * single-attempt Step's attempt still waiting for its claim's
   * confirmation has not started and is not released: its lease lapses with
   * this Worker's liveness.
   * @default Infinity (wait for every running attempt)
   */
  drainTimeoutMs?: number;
}

/** What {@link Worker.close} did. */
export interface WorkerCloseResult {
  /** Attempts still running at the drain deadline and handed back to the store. */
  released: number;
}

function resolveDrainTimeoutMs(value: number | undefined): number {
  const resolved = value ?? Infinity;
  if (typeof resolved !== "number" || Number.isNaN(resolved) || resolved < 0) {
    throw new InvalidInputError(`Worker close option drainTimeoutMs ${String(value)} is invalid: use a number of milliseconds, 0 or more`);
  }
  return resolved;
}

interface ResolvedWorkerOptions {
  store: Store;
  flows: Map<string, FlowCore>;
  concurrency: number;
  workerId: string;
  livenessTimeoutMs: number;
  pollIntervalMs: number;
  onError: (error: unknown) => void;
  onAttemptFailed: ((failure: FailedAttempt) => void) | undefined;
  logger: PerdureLogger | undefined;
  meterProvider: MeterProvider | undefined;
  timers: LocalTimers;
  streamBatchWindowMs: number;
}

function errorLogOf(logger: PerdureLogger | undefined): (error: unknown) => void {
  if (logger === undefined) return (error) => console.error("perdure worker:", error);
  return (error) => logger.error({ err: error }, "Worker error");
}

function failedAttemptLogOf(logger: PerdureLogger | undefined): ((failure: FailedAttempt) => void) | undefined {
  if (logger === undefined) return undefined;
  return (failure) => logger.error(failedAttemptLogFields(failure), failedAttemptMessage(failure));
}

function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  const flows = new Map<string, FlowCore>();
  for (const flow of options.flows) {
    if (flow?.kind !== "flow") throw new InvalidInputError(`Worker flows must be made with defineFlow; got ${JSON.stringify(flow)}`);
    if (flows.has(flow.flowType)) throw new InvalidInputError(`Worker got two definitions of Flow type ${flow.flowType}`);
    flows.set(flow.flowType, flow);
  }
  const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
    const resolved = value ?? fallback;
    if (!Number.isSafeInteger(resolved) || resolved <= 0) throw new InvalidInputError(`Worker option ${name} ${String(value)} is invalid: use a positive integer`);
    return resolved;
  };
  return {
    store: options.store,
    flows,
    concurrency: positiveInteger("concurrency", options.concurrency, 8),
    workerId: options.workerId ?? randomUUID(),
    livenessTimeoutMs: positiveInteger("livenessTimeoutMs", options.livenessTimeoutMs, 5000),
    pollIntervalMs: positiveInteger("pollIntervalMs", options.pollIntervalMs, options.store.pollIntervalMs),
    onError: options.onError ?? errorLogOf(options.logger),
    onAttemptFailed: options.onAttemptFailed ?? failedAttemptLogOf(options.logger),
    logger: options.logger,
    meterProvider: options.meterProvider,
    timers: timersOf(options),
    streamBatchWindowMs: resolveStreamBatchWindowMs(options.streamBatchWindowMs),
  };
}

function resolveStreamBatchWindowMs(value: number | undefined): number {
  const resolved = value ?? streamFlushWindowMs;
  if (!Number.isSafeInteger(resolved) || resolved < 0) throw new InvalidInputError(`Worker option streamBatchWindowMs ${String(value)} is invalid: use an integer number of milliseconds, 0 or more`);
  return resolved;
}

/** The Worker's key of an attempt: by lease, not by execution, so an abandoned attempt and its successor are two. */
/** The loop's wait after `failures` failed rounds in a row: one poll interval, doubling, up to 5 s (or the poll interval when longer). */
function loopBackoffMs(pollIntervalMs: number, failures: number): number {
  return Math.min(pollIntervalMs * 2 ** Math.min(Math.max(0, failures - 1), 10), Math.max(pollIntervalMs, 5000));
}

/**
 * How long an RPC in this process waits for a claim in flight to give back
 * the slots it holds, before it publishes without claiming for this Worker:
 * about one commit's round trip, which the RPC would often wait for anyway
 * (the commit holds the Flow's row).
 */
const localSlotWaitMs = 20;

/** How far back, and how many, sessions a Worker names when the store's commit position falls. */
const recentCommitsWindowMs = 60_000;
const recentCommitsRemembered = 10_000;

/** How many committed leases a Worker remembers: far more than it commits within any failover's reach. */
const committedLeasesRemembered = 100_000;

/** What became of an attempt the store forgot, as the Worker's error says it. */
function outcomeOf(lost: LostAttempt): string {
  switch (lost.action) {
    case "failed": return "recorded as failed with CommitLost and not run again";
    case "running-again": return `Worker ${lost.claimedBy ?? "?"} has already claimed it anew and may run it a second time`;
    case "ran-again": return "another run of it has finished since: it ran a second time";
    case "missing": return lost.started.singleAttempt
      ? "the store has no such execution now (its session went back to before it); if the session makes the call again, whichever Worker claims it runs it a second time (this Worker refuses it)"
      : "the store has no such execution now (its session went back to before it); if the session makes it again, it runs again";
    case "waiting-again": return lost.started.singleAttempt
      ? "the store shows it waiting for its condition again; if that is met again, whichever Worker claims it runs it a second time (this Worker refuses it)"
      : "the store shows it waiting for its condition again; if that is met again, it runs again";
    case "unknown": return "its execution has finished and the store keeps no history of who ran it, so it may have run a second time";
  }
}

/** A set of the most recent keys, forgetting the oldest past its size. */
class RecentKeys {
  private readonly keys = new Set<string>();
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  add(key: string): void {
    this.keys.add(key);
    if (this.keys.size > this.size) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }
}

/**
 * A lease's key. `join` builds one flat string: a template literal builds a tree of V8 cons strings, and the
 * 100,000 keys `committedLeases` keeps took 178 bytes each that way against 66 (issue 40, Worker memory).
 */
function leaseKey(execution: ExecutionRow): string {
  return [execution.flowId, execution.executionId, execution.leaseToken].join("\u0000");
}

/**
 * Runs Step methods of the hosted Flow types with bounded concurrency. It
 * wakes at once on commits in this process, on due timers, and polls for
 * work from other processes.
 *
 * @example
 * const worker = new Worker({ store, flows: [orderFlow] });
 * await worker.start();
 * // ...
 * await worker.close(); // drains running attempts
 * await worker.close({ drainTimeoutMs: 25_000 }); // or hands back what still runs after 25 s
 */
export class Worker {
  readonly workerId: string;
  private readonly options: ResolvedWorkerOptions;
  private readonly running = new Map<string, RunningAttempt>();
  /** Every transaction that claims tasks goes through it, so a claim whose reply was lost is found and run. */
  private readonly claims: ClaimLedger;
  private state: "new" | "running" | "closing" | "closed" = "new";
  private closed: Promise<WorkerCloseResult> | undefined;
  /** What `start` does after it marked the Worker running. */
  private starting: Promise<void> | undefined;
  private wakeRequested = false;
  private wakeLoop: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  /** Resolves `start`'s wait for the loop's first pass. */
  private firstPassDone: (() => void) | undefined;
  private stopMaintenance: (() => void) | undefined;
  /** Maintenance passes under way (liveness, cancellations, recovery; a slow one may overlap the next): `close` waits for them before it removes its liveness. */
  private readonly maintaining = new Set<Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  /** Slots held for starts and RPCs in this process that may claim for this Worker, whose request is still out. */
  private reservedSlots = 0;
  private withdrawLocalClaims: (() => void) | undefined;
  private lastRecoveryAt = 0;
  /** Whether this Worker has been in touch with the store long enough to judge others' liveness. */
  private readonly storeContact: StoreContact;
  private readonly metrics = new WorkerMetrics();
  /** The highest commit position the store reported (see `Store.commitPosition`). */
  private highestCommitPosition: bigint | undefined;
  /** Sessions this Worker committed recently, with when, oldest first (bounded). */
  private readonly recentCommits = new Map<string, number>();
  /** Loop rounds in a row that failed (the store did not answer), for the backoff. */
  private loopFailures = 0;
  /**
   * Leases of attempts this Worker ran whose commit the store confirmed: if
   * the store later shows one leased to this Worker again, it lost that
   * commit (a failover to a standby that lagged), and the attempt must not
   * be run again as a lost claim.
   */
  private readonly committedLeases = new RecentKeys(committedLeasesRemembered);
  /** The attempts this Worker started, to notice a store that forgot them (see `lost-attempts.ts`). */
  private readonly startedAttempts = new StartedAttempts();
  /**
   * Started attempts that were still running when the Worker checked for
   * attempts the store forgot: each is checked once it settles (its commit
   * may be fenced off because the store forgot its claim). Keyed by lease.
   */
  private readonly checkWhenSettled = new Set<string>();
  /** When the store's commit position last fell (store clock), for the attempts a check cannot account for. */
  private fellAt: number | undefined;
  /** The fall (its `fellAt`) whose attempts a check has gone through. */
  private checkedFallAt: number | undefined;
  /** The commit position reading under way, which a second asker joins. */
  private positionReading: Promise<boolean> | undefined;
  /** When the hosted Flow types' next Timer falls due, as far as this Worker knows. */
  private timerCheckAt = 0;
  /** When a queued task (a retry after its backoff) becomes claimable, as far as this Worker knows. */
  private taskCheckAt = Infinity;
  /** Wake-ups for tasks heard so far. */
  private taskWakes = 0;
  /**
   * The count of task wake-ups at which a commit's own claim came up short,
   * so nothing was claimable: while no wake-up, poll or due task came since,
   * the loop need not claim again.
   */
  private claimedAllAt: number | undefined;

  constructor(options: WorkerOptions) {
    this.options = resolveWorkerOptions(options);
    this.workerId = this.options.workerId;
    this.storeContact = new StoreContact(this.options.livenessTimeoutMs);
    this.claims = new ClaimLedger({
      launch: (claim) => this.launch(claim),
      adoptLostClaims: () => this.adoptLostClaims(),
      resume: () => this.lookForTasks(),
      onError: (error) => this.reportStoreFailure(error),
    });
  }

  /** A store failure off the loop: a closed store stops the Worker; anything else goes to `onError`, and the next pass tries again. */
  private reportStoreFailure(error: unknown): void {
    if (StoreClosedError.isInstance(error)) this.stopForClosedStore(error);
    else this.options.onError(error);
  }

  private readonly onLeaseTakenOver = (row: ExecutionRow, errorType: string): void => this.metrics.leaseTakenOver(row.flowType, row.stepType, errorType);

  /**
   * True while this Worker claims work: it was started, is not closing, and
   * its last liveness write reached the store within half its liveness
   * timeout (writes go every fifth of it), so it is not cut off from the
   * store. For readiness checks such as `perdure worker`'s `/readyz`.
   */
  get isClaiming(): boolean {
    return this.state === "running" && this.storeContact.hasWrittenWithin(this.now(), this.options.livenessTimeoutMs / 2);
  }

  /** Attempts running now. */
  get activeCount(): number {
    return this.running.size;
  }

  /** Registers liveness, starts claiming work, and returns once the first claim for what was already queued has come back. */
  async start(): Promise<void> {
    if (this.state !== "new") throw new InvalidInputError(`Worker ${this.workerId} was already started`);
    this.state = "running";
    // A close() called meanwhile waits for this, so that nothing start sets up outlives it.
    this.starting = this.startUp();
    await this.starting;
  }

  private async startUp(): Promise<void> {
    await this.metrics.start(this.options.meterProvider, () => ({ busy: this.running.size, limit: this.options.concurrency }), () => this.countReadyTasks());
    // Claims still held under this ID belong to a dead predecessor (a restart with a stable
    // workerId): fail them over now rather than after their method timeout.
    await this.options.store.transaction((transaction) => transaction.removeWorker(this.workerId));
    while (await recoverLapsed(this.options.store, this.options.flows, undefined, this.onLeaseTakenOver) > 0);
    await this.touchLiveness();
    this.unsubscribe = this.options.store.subscribe((event) => this.onWake(event));
    const tickMs = Math.max(50, Math.min(1000, Math.floor(this.options.livenessTimeoutMs / 5)));
    const tick = (): void => {
      this.stopMaintenance = this.options.timers.after(tickMs, tick, { background: true });
      const pass = this.maintain();
      this.maintaining.add(pass);
      void pass.finally(() => this.maintaining.delete(pass));
    };
    this.stopMaintenance = this.options.timers.after(tickMs, tick, { background: true });
    const firstPass = new Promise<void>((resolve) => { this.firstPassDone = resolve; });
    this.loopDone = this.loop();
    // What was queued before it started is claimed (or the claim failed) before start returns.
    await firstPass;
    this.withdrawLocalClaims = offerLocalClaims(this.options.store, {
      workerId: this.workerId,
      flows: this.options.flows,
      reserveSlot: () => this.reserveLocalSlot(),
      reserveSlotSoon: () => this.reserveLocalSlotSoon(),
      runClaim: (request) => this.runLocalClaim(request),
    });
  }

  /**
   * Stops claiming, waits for running attempts to commit (up to
   * `drainTimeoutMs`, then releases the rest), and removes its liveness.
   * Closing again returns the first close's result.
   */
  async close(options: WorkerCloseOptions = {}): Promise<WorkerCloseResult> {
    const drainTimeoutMs = resolveDrainTimeoutMs(options.drainTimeoutMs);
    this.closed ??= this.drainAndLeave(drainTimeoutMs);
    return await this.closed;
  }

  private async drainAndLeave(drainTimeoutMs: number): Promise<WorkerCloseResult> {
    if (this.state === "new") {
      this.state = "closed";
      return { released: 0 };
    }
    await this.starting?.catch(() => undefined);
    this.state = "closing";
    this.withdrawLocalClaims?.();
    this.requestWake();
    const loopDone = this.loopDone ?? Promise.resolve();
    let released = 0;
    if (drainTimeoutMs !== Infinity && !(await this.settlesWithin(loopDone, drainTimeoutMs))) {
      // Claims still in flight may launch attempts after the deadline: release those too, until the loop has drained.
      do released += await this.releaseRunning(drainTimeoutMs);
      while (!(await this.settlesWithin(loopDone, 20)));
    }
    await loopDone;
    this.stopMaintenance?.();
    // A liveness write still in flight could commit after the removal below and leave this Worker's row alive.
    await Promise.all(this.maintaining);
    this.unsubscribe?.();
    this.metrics.stop();
    await this.options.store.transaction((transaction) => transaction.removeWorker(this.workerId)).catch(this.options.onError);
    this.state = "closed";
    return { released };
  }

  /** True when `promise` settles within `delayMs`. */
  private settlesWithin(promise: Promise<unknown>, delayMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const cancel = this.options.timers.after(delayMs, () => resolve(false));
      void promise.then(() => {
        cancel();
        resolve(true);
      });
    });
  }

  /** Hands every running attempt back to the store; the number whose release landed. */
  private async releaseRunning(drainTimeoutMs: number): Promise<number> {
    const attempts = [...this.running.entries()].filter(([, attempt]) => attempt.released !== true);
    const results = await Promise.all(attempts.map(async ([key, attempt]) => {
      attempt.released = true;
      attempt.abort.abort(new Error(`the Worker is closing and released this attempt after its drain timeout of ${drainTimeoutMs} ms`));
      if (attempt.started !== true) {
        // Never started (its claim's confirmation is still out): not handed back, since on PostgreSQL the release would wait
        // behind the confirmation's lock on the execution's row, holding the session's Flow row meanwhile. Its lease lapses
        // with this Worker's liveness, and another Worker recovers it.
        this.running.delete(key);
        this.requestWake();
        return false;
      }
      try {
        const released = await releaseAttempt(this.options.store, attempt.claim, this.workerId, workerReleasedError(attempt.claim, this.workerId, drainTimeoutMs));
        if (released) this.metrics.attemptEnded(attempt.claim, { kind: "released" }, this.now());
        return released;
      } catch (error) {
        // Not released: the lease lapses with this Worker's liveness and another Worker recovers it.
        this.options.onError(error);
        return false;
      } finally {
        this.running.delete(key);
        this.requestWake();
      }
    }));
    return results.filter(Boolean).length;
  }

  private onWake(event: WakeEvent): void {
    if (event.kind === "tasks") {
      this.taskWakes += 1;
      if (event.at <= this.now()) this.requestWake();
      else if (event.at < this.taskCheckAt) {
        this.taskCheckAt = event.at;
        this.requestWake();
      }
    }
    if (event.kind === "timers" && event.dueAt < this.timerCheckAt) {
      this.timerCheckAt = event.dueAt;
      this.requestWake();
    }
    // A failed check is a store failure like any: reported, and made again by the next maintenance pass.
    if (event.kind === "executions_cancelled") {
      this.checkCancellations().catch((error: unknown) => this.reportStoreFailure(error));
    }
  }

  /** Wakes the loop to claim, whatever the last commit's claim found. */
  private lookForTasks(): void {
    this.claimedAllAt = undefined;
    this.requestWake();
  }

  private requestWake(): void {
    this.wakeRequested = true;
    const wake = this.wakeLoop;
    this.wakeLoop = undefined;
    wake?.();
  }

  private async loop(): Promise<void> {
    while (this.state === "running") {
      this.wakeRequested = false;
      let worked = false;
      let failed = false;
      try {
        const claimedAll = this.claimedAllAt === this.taskWakes && this.taskCheckAt > this.now();
        if (!claimedAll) worked = await this.claimAndRun();
        if (this.now() >= this.timerCheckAt && await this.fireTimers()) worked = true;
      } catch (error) {
        if (StoreClosedError.isInstance(error)) {
          this.stopForClosedStore(error);
          break;
        }
        this.options.onError(error);
        failed = true;
      }
      this.loopFailures = failed ? this.loopFailures + 1 : 0;
      this.firstPassDone?.();
      this.firstPassDone = undefined;
      if (!failed && (worked || this.wakeRequested)) continue;
      // A failing store is asked again with a backoff, not in a hot loop; the liveness tick wakes the loop once a write gets through.
      await this.sleep(failed ? loopBackoffMs(this.options.pollIntervalMs, this.loopFailures) : this.nextWakeDelay());
    }
    this.firstPassDone?.();
    while (this.busySlots() > 0) await new Promise<void>((resolve) => { this.wakeLoop = resolve; });
  }

  /** Fires due Timers and learns when the next one falls due; true when any fired. */
  private async fireTimers(): Promise<boolean> {
    const checkedAt = this.now();
    const { fired, nextDueAt } = await fireDueTimers(this.options.store, this.options.flows, 64);
    // Other processes may set earlier Timers, so look again after one poll interval at most.
    this.timerCheckAt = Math.min(nextDueAt ?? Infinity, checkedAt + this.options.pollIntervalMs);
    return fired > 0;
  }

  /** Claims what fits; true only when it filled every free slot, so more may be waiting. */
  private async claimAndRun(): Promise<boolean> {
    const free = this.claims.claimable(this.options.concurrency - this.busySlots());
    if (free <= 0) return false;
    if (this.taskCheckAt <= this.now()) this.taskCheckAt = Infinity;
    let batch: ClaimBatch = { claims: [], changed: [] };
    await this.claims.run(free, async () => {
      batch = await claimTasks(this.options.store, this.options.flows, this.workerId, free);
      return batch.claims;
    });
    for (const flowTransaction of batch.changed) flowTransaction.announce(this.options.store);
    return batch.claims.length >= free || batch.changed.length > 0;
  }

  /** Slots taken: running attempts, starts this process is making for this Worker, and slots claims in flight may fill. */
  private busySlots(): number {
    return this.running.size + this.reservedSlots + this.claims.held;
  }

  private reserveLocalSlot(): boolean {
    if (this.state !== "running" || this.claims.claimable(this.options.concurrency - this.busySlots()) <= 0) return false;
    this.reservedSlots += 1;
    return true;
  }

  /**
   * {@link reserveLocalSlot}, for an RPC: when no slot is free but claims in
   * flight hold some (a commit's claim holds every free slot until it
   * answers, and usually claims fewer), waits up to
   * {@link localSlotWaitMs} for the next one to settle and tries again.
   */
  private async reserveLocalSlotSoon(): Promise<boolean> {
    if (this.reserveLocalSlot()) return true;
    if (this.state !== "running" || this.claims.held === 0) return false;
    await new Promise<void>((resolve) => {
      const cancelTimer = this.options.timers.after(localSlotWaitMs, () => {
        forget();
        resolve();
      });
      const forget = this.claims.onNextSettle(() => {
        cancelTimer();
        resolve();
      });
    });
    return this.reserveLocalSlot();
  }

  /** A start or an RPC in this process that claims for this Worker (see local-handover.ts): a claim like any other. */
  private async runLocalClaim(request: () => Promise<readonly ClaimedAttempt[]>): Promise<void> {
    const wakesBefore = this.taskWakes;
    try {
      // Its slot is already held in `reservedSlots`.
      await this.claims.run(1, request, 0);
    } finally {
      this.reservedSlots -= 1;
      // A wake-up that came while the slot was held found no slot free, and the loop slept: look now.
      if (this.taskWakes !== wakesBefore) this.requestWake();
      // A closing Worker's drain waits for this slot.
      if (this.state !== "running") this.requestWake();
    }
  }

  private launch(claim: ClaimedAttempt): void {
    const key = leaseKey(claim.execution);
    const earlier = claim.method === "execute" ? this.startedAttempts.get(claim.execution.flowId, claim.execution.executionId) : undefined;
    if (earlier !== undefined && earlier.executeClaims >= claim.execution.executeClaims && isSameExecution(earlier, claim.execution)) {
      this.refuseForgottenAttempt(claim, earlier);
      return;
    }
    // A single-attempt call this Worker ran that the store lost with its execution, made again by its session under another number.
    const missing = isSingleAttempt(claim) ? this.startedAttempts.takeMissing(claim.execution) : undefined;
    if (missing !== undefined) {
      this.refuseForgottenAttempt(claim, missing);
      return;
    }
    const attempt: RunningAttempt = { claim, abort: new AbortController() };
    this.running.set(key, attempt);
    const confirmClaim = this.options.store.confirmClaim;
    if (confirmClaim !== undefined && isSingleAttempt(claim)) {
      // Its slot stays taken while the store confirms the claim; nothing has started yet.
      void this.confirmBeforeStart(attempt, confirmClaim).then((confirmed) => {
        if (confirmed) this.begin(key, attempt);
        else {
          this.running.delete(key);
          this.requestWake();
        }
      }, (error: unknown) => {
        this.running.delete(key);
        this.options.onError(error);
        this.requestWake();
      });
      return;
    }
    this.begin(key, attempt);
  }

  /**
   * Asks the store to confirm a single-attempt attempt's claim before it
   * starts (see `Store.confirmClaim`), until it answers or the attempt's
   * deadline passes. While the store fails (a failover under way), the
   * attempt waits unstarted: a claim the new primary lacks comes back as
   * not held, and the attempt is dropped without having run, so whoever
   * claims it next runs it for the first time. False: do not start.
   */
  private async confirmBeforeStart(attempt: RunningAttempt, confirmClaim: NonNullable<Store["confirmClaim"]>): Promise<boolean> {
    const { execution } = attempt.claim;
    // Cancelled, or released by its closing Worker, meanwhile.
    const wanted = (): boolean => !attempt.abort.signal.aborted && attempt.released !== true;
    const dropped = (reason: string): false => {
      // A closing Worker's release says what became of it.
      if (attempt.released === true) return false;
      const message = `did not start ${execution.stepType} (execution ${execution.executionId}) of session ${execution.flowId}: ${reason}; it runs only where it is claimed next`;
      if (this.options.logger === undefined) console.warn(`perdure worker: ${message}`);
      else this.options.logger.warn({ flowId: execution.flowId, stepType: execution.stepType, executionId: execution.executionId }, message);
      return false;
    };
    // Aborted meanwhile: its closing Worker released it (and says so), or the attempt was abandoned.
    const cancelled = "its execution was cancelled or its lease was lost before it started";
    for (let failures = 0; ;) {
      if (!wanted()) return dropped(cancelled);
      try {
        const held = await confirmClaim({ flowId: execution.flowId, executionId: execution.executionId, workerId: this.workerId, leaseToken: execution.leaseToken });
        if (!held) return dropped("the store no longer shows this Worker's claim of it (cancelled, taken over, or lost in a failover)");
        return wanted() || dropped(cancelled);
      } catch (error) {
        failures += 1;
        if (failures === 1 || failures % 30 === 0) {
          this.options.onError(new Error(`could not confirm the claim of single-attempt ${execution.stepType} (execution ${execution.executionId}) of session ${execution.flowId}; `
            + "it does not start until the store confirms it", { cause: error }));
        }
        const now = this.now();
        // Past its deadline the lease lapses and recovery takes the execution over; a closing Worker releases it.
        if (execution.deadlineAt !== null && now > execution.deadlineAt) return dropped("the store did not confirm its claim before the attempt's deadline");
        await new Promise<void>((resolve) => this.options.timers.after(Math.min(2000, 50 * 2 ** Math.min(failures - 1, 6)), resolve));
      }
    }
  }

  /** Starts a claimed attempt that holds its slot in `running`. */
  private begin(key: string, attempt: RunningAttempt): void {
    const { claim } = attempt;
    attempt.started = true;
    if (claim.method === "execute") {
      const { flowId, executionId, seq, stepType, attempt: attemptNumber, executeClaims } = claim.execution;
      this.startedAttempts.add({
        flowId, flowType: claim.flow.flowType, executionId, seq, stepType, attempt: attemptNumber, executeClaims,
        claimedAt: claim.claimedAt, singleAttempt: isSingleAttempt(claim), inputKey: inputKeyOf(claim.execution.input),
      });
    }
    this.metrics.attemptStarted(claim);
    const ended = noteLocalAttempt(this.options.store, claim.execution.flowId);
    // The commit claims the next tasks in its own transaction while this slot is still counted as busy.
    let wakesBeforeCommit = 0;
    const next = () => {
      wakesBeforeCommit = this.taskWakes;
      return this.state === "running" ? { flows: this.options.flows, limit: this.claims.claimable(this.options.concurrency - this.busySlots() + 1) } : undefined;
    };
    // Its slot is free once the commit landed, before the tasks it claimed are launched: a whole
    // group of commits settles at once, and each of their claims must see the others' slots free.
    const onCommitted = (claimedAll: boolean) => {
      this.running.delete(key);
      this.committedLeases.add(key);
      this.noteCommit(claim.execution.flowId);
      // A wake-up during the commit may be for a task its claim did not see yet.
      if (claimedAll && wakesBeforeCommit === this.taskWakes) this.claimedAllAt = this.taskWakes;
    };
    void runAttempt(this.options.store, this.workerId, attempt, { onError: this.options.onError, onAttemptFailed: this.options.onAttemptFailed, timers: this.options.timers, streamBatchWindowMs: this.options.streamBatchWindowMs, onCommitted, metrics: this.metrics.enabled ? this.metrics : undefined }, next, this.claims).then((claims) => {
      ended();
      // The ledger launched what the commit claimed.
      this.running.delete(key);
      this.checkSettled(key, claim);
      // A drained Worker's loop waits for this; a running one only needs waking when slots stay free, or when a
      // wake-up came while the commit's claim held the slots (the loop then found none free, and slept).
      if (this.state !== "running" || claims.length === 0 || this.taskWakes !== wakesBeforeCommit) this.requestWake();
    }, (error: unknown) => {
      ended();
      this.running.delete(key);
      this.checkSettled(key, claim);
      this.options.onError(error);
      this.requestWake();
    });
  }

  /** An attempt that ran through a check for forgotten attempts is checked now that it settled (committed, fenced off, or abandoned). */
  private checkSettled(key: string, claim: ClaimedAttempt): void {
    if (!this.checkWhenSettled.delete(key)) return;
    const started = this.startedAttempts.get(claim.execution.flowId, claim.execution.executionId);
    if (started === undefined || started.reported === true) return;
    this.checkSettledAttempt(started);
  }

  private checkSettledAttempt(started: StartedAttempt): void {
    void this.reportLostAttempts([started]).catch((error: unknown) => {
      this.options.onError(error);
      // Not checked (the store failed): again shortly, while the Worker runs.
      if (this.state === "running") this.options.timers.after(1000, () => this.checkSettledAttempt(started), { background: true });
    });
  }

  /**
   * After claims were in doubt (the store failed calls, as in a failover),
   * looks for attempts this Worker started that the store has forgotten: it
   * went back in time. Each is logged as an error naming its session and,
   * unless another Worker claimed it anew meanwhile, failed with `CommitLost`
   * so it is not run again as new.
   */
  private async checkStartedAttempts(tracked: ReadonlySet<string>): Promise<void> {
    let since = -Infinity;
    // Read now: a failed claim may put the claims in doubt before the maintenance tick has read the fall.
    const checksFall = this.options.store.commitPosition !== undefined && await this.checkCommitPosition();
    if (checksFall) {
      // A store with a commit position forgot nothing unless it fell; each fall is gone through once, over the
      // attempts claimed in the minute before it (far longer than any replication lag a failover loses).
      if (this.fellAt === undefined || this.fellAt === this.checkedFallAt) return;
      since = this.fellAt - recentCommitsWindowMs;
    }
    // Otherwise (no position, or one the store did not give: a server that refuses the query, or one still down)
    // every attempt started lately is checked, so claiming resumes without missing a fall it could not see; a store
    // still down fails that check too, and the claims stay in doubt until it is tried again.
    const fellAt = this.fellAt;
    const running = new Map<string, string>();
    for (const key of tracked) running.set(key.split("\u0000").slice(0, 2).join("\u0000"), key);
    const candidates: StartedAttempt[] = [];
    for (const started of this.startedAttempts.recent(1000)) {
      if (started.claimedAt < since) break;
      const runningKey = running.get(`${started.flowId}\u0000${started.executionId}`);
      // Still running: checked once it settles, when its commit has landed or been fenced off.
      if (runningKey === undefined) candidates.push(started);
      else this.checkWhenSettled.add(runningKey);
    }
    // Single-attempt writes first: another Worker running one again is what most needs saying.
    await this.reportLostAttempts([...candidates.filter((started) => started.singleAttempt), ...candidates.filter((started) => !started.singleAttempt)]);
    if (checksFall) this.checkedFallAt = fellAt;
  }

  /** Checks `attempts` against the store (see `findLostAttempts`) and reports each it forgot. */
  private async reportLostAttempts(attempts: readonly StartedAttempt[]): Promise<void> {
    const unknownWithin = this.fellAt === undefined ? undefined : { from: this.fellAt - recentCommitsWindowMs, to: this.fellAt };
    // Each is logged as soon as it is found: another Worker may be about to run it again.
    await findLostAttempts(this.options.store, this.options.flows, attempts, { workerId: this.workerId, unknownWithin }, (lost) => {
      lost.started.reported = true;
      // Recorded in the store: later claims of the execution are new attempts.
      if (lost.action === "failed") this.startedAttempts.forget(lost.started);
      if (lost.action === "missing" && lost.started.singleAttempt) this.startedAttempts.addMissing(lost.started);
      this.reportForgottenAttempt(lost.started, outcomeOf(lost), lost.claimedBy, lost.action === "unknown" ? "may no longer show" : "no longer shows");
    });
  }

  /**
   * This Worker claimed an attempt it had started before: the store forgot
   * that claim (it went back in time). The attempt is failed with
   * `CommitLost` under the new lease instead of run again as new.
   */
  private refuseForgottenAttempt(claim: ClaimedAttempt, earlier: StartedAttempt): void {
    const key = leaseKey(claim.execution);
    this.running.set(key, { claim, abort: new AbortController() });
    const forgotten = { flowId: earlier.flowId, flowType: earlier.flowType, stepType: earlier.stepType, executionId: earlier.executionId, attempt: earlier.attempt };
    void failLostCommit(this.options.store, this.options.flows, this.workerId, claim.execution).then((failed) => {
      if (failed) this.reportForgottenAttempt(forgotten, "recorded as failed with CommitLost and not run again");
    }, (error: unknown) => this.options.onError(error)).finally(() => {
      this.running.delete(key);
      this.checkWhenSettled.delete(key);
      this.requestWake();
    });
  }

  private reportForgottenAttempt(started: Pick<StartedAttempt, "flowId" | "flowType" | "stepType" | "executionId" | "attempt">, outcome: string, claimedBy: string | null = null, shows = "no longer shows"): void {
    const fields = { flowId: started.flowId, flowType: started.flowType, stepType: started.stepType, executionId: started.executionId, attempt: started.attempt, claimedBy };
    const message = `the store went back in time: session ${started.flowId} (${started.flowType}) ${shows} attempt ${started.attempt} of ${started.stepType} (execution ${started.executionId}) that this Worker started, `
      + `so the database lost its commits since then (input acknowledged to callers may be lost too); ${outcome}`;
    if (this.options.logger === undefined) console.error(`perdure worker: ${message}`);
    else this.options.logger.error(fields, message);
  }

  /**
   * Reads the store's commit position (where it has one) and reports, once
   * per fall, a position below the highest seen: the store lost commits. It
   * names the sessions this Worker committed in the last minute, the ones
   * whose latest work may be gone.
   */
  private checkCommitPosition(): Promise<boolean> {
    this.positionReading ??= this.readCommitPosition().finally(() => {
      this.positionReading = undefined;
    });
    return this.positionReading;
  }

  /** False when the store has a commit position and did not answer. */
  private async readCommitPosition(): Promise<boolean> {
    const store = this.options.store;
    if (store.commitPosition === undefined) return true;
    // A failed read tells nothing new: the liveness write just before reports an unreachable store.
    const position = await store.commitPosition().catch(() => undefined);
    if (position === undefined) return false;
    const highest = this.highestCommitPosition;
    if (highest === undefined || position >= highest) {
      this.highestCommitPosition = position;
      return true;
    }
    this.highestCommitPosition = position;
    this.fellAt = this.now();
    const since = Date.now() - recentCommitsWindowMs;
    const sessions = [...this.recentCommits].filter(([, at]) => at >= since).map(([flowId]) => flowId);
    const message = `the store went back in time: its commit position fell from ${highest} to ${position}, so the database lost commits `
      + `(a failover to a standby that had not received them?): messages, approvals and Step results acknowledged since then may be gone; `
      + `sessions this Worker committed in the last minute: ${sessions.length === 0 ? "none" : sessions.join(", ")}`;
    if (this.options.logger === undefined) console.error(`perdure worker: ${message}`);
    else this.options.logger.error({ highestCommitPosition: String(highest), commitPosition: String(position), sessions }, message);
    // The store may show leases to this Worker whose commits it lost: look for them, as after a failed claim.
    this.claims.doubt();
    return true;
  }

  private noteCommit(flowId: string): void {
    this.recentCommits.delete(flowId);
    this.recentCommits.set(flowId, Date.now());
    if (this.recentCommits.size > recentCommitsRemembered) {
      const oldest = this.recentCommits.keys().next().value;
      if (oldest !== undefined) this.recentCommits.delete(oldest);
    }
  }

  /** Logs, as an error, an attempt whose confirmed commit the store lost (see `adoptLostClaims`). */
  private reportLostCommit(row: ExecutionRow): void {
    const fields = { flowId: row.flowId, flowType: row.flowType, stepType: row.stepType, executionId: row.executionId, attempt: row.attempt };
    const message = `the database lost committed work: session ${row.flowId} (${row.flowType}): ${row.stepType} attempt ${row.attempt} (execution ${row.executionId}) `
      + "had committed, and the store shows it running again; recorded as failed with CommitLost and not run again (a single-attempt Step's outcome is unknown)";
    if (this.options.logger === undefined) console.error(`perdure worker: ${message}`);
    else this.options.logger.error(fields, message);
  }

  /**
   * Runs the attempts the store shows leased to this Worker that it does not
   * track: their claim committed, but its reply was lost. The ledger calls
   * this only while no claim transaction is in flight, so `running` holds
   * every claim that did return. True when it saw all of this Worker's leases.
   */
  private async adoptLostClaims(): Promise<boolean> {
    // A closing Worker leaves them to liveness recovery once its row is gone.
    if (this.state !== "running") return true;
    const tracked = new Set(this.running.keys());
    const limit = tracked.size + this.options.concurrency;
    await this.checkStartedAttempts(tracked);
    const { adopted, lostCommits, complete } = await adoptLostClaims(this.options.store, this.options.flows, this.workerId, (execution) => tracked.has(leaseKey(execution)), limit,
      (execution) => this.committedLeases.has(leaseKey(execution)));
    for (const row of lostCommits) this.reportLostCommit(row);
    // Closing meanwhile: its loop may have drained already, so leave them to liveness recovery too.
    if (this.state !== "running") return true;
    for (const claim of adopted) this.launch(claim);
    return complete;
  }

  /** Sleep until the next known Timer or retry, or one poll interval for work from other processes. */
  private nextWakeDelay(): number {
    const now = this.now();
    const timerDelay = Math.max(0, this.timerCheckAt - now);
    const taskDelay = Math.max(0, this.taskCheckAt - now);
    // No slot to fill, or claims in doubt until the ledger adopts them (it wakes the loop then).
    if (this.claims.claimable(this.options.concurrency - this.busySlots()) <= 0) return timerDelay;
    return Math.min(timerDelay, taskDelay, this.options.pollIntervalMs);
  }

  private sleep(delayMs: number): Promise<void> {
    if (this.wakeRequested || this.state !== "running") return Promise.resolve();
    return new Promise<void>((resolve) => {
      const cancel = this.options.timers.after(delayMs, () => {
        this.wakeLoop = undefined;
        // A poll: work from other processes arrives without a wake-up.
        this.claimedAllAt = undefined;
        resolve();
      });
      this.wakeLoop = () => {
        cancel();
        resolve();
      };
    });
  }

  /** The ready-queue depth of the hosted Flow types, read without locks (the `perdure.queue.ready` gauge). */
  private countReadyTasks(): Promise<number> {
    const store = this.options.store;
    const flowTypes = [...this.options.flows.keys()];
    const count = (transaction: StoreTransaction): Promise<number> => transaction.countClaimable(flowTypes, this.now(), readyQueueCountLimit);
    return store.read === undefined ? store.transaction(count) : store.read(count);
  }

  /** The store's clock: every time this Worker compares with a stored one. */
  private now(): number {
    return this.options.store.clock.now();
  }

  private async touchLiveness(): Promise<void> {
    // The expiry is taken once the transaction has its connection: a write that waited for the
    // store (an outage, a full pool) must not store a liveness that has already lapsed.
    await this.options.store.transaction((transaction) => transaction.touchWorker(this.workerId, this.now() + this.options.livenessTimeoutMs));
    this.storeContact.written(this.now());
  }

  /** Liveness, cancellation checks of running attempts, and recovery of lapsed leases. */
  private async maintain(): Promise<void> {
    if (this.state === "closed") return;
    try {
      await this.touchLiveness();
      // The store answers again: a loop backing off from failures need not wait out its delay.
      if (this.loopFailures > 0) this.requestWake();
      await this.checkCommitPosition();
      await this.checkCancellations();
      this.claims.adoptWhenSettled();
      const now = this.now();
      if (this.state === "running" && now - this.lastRecoveryAt >= Math.min(1000, this.options.livenessTimeoutMs / 5)) {
        this.lastRecoveryAt = now;
        // This Worker is alive, so a lapsed liveness row of its own is never a lost Worker; and after it
        // lost the store, others' rows are judged only once they have had time to write them again.
        const judgement = { liveWorkerId: this.workerId, judgesLiveness: this.storeContact.judgesLiveness(now) };
        if (await recoverLapsed(this.options.store, this.options.flows, judgement, this.onLeaseTakenOver) > 0) this.lookForTasks();
      }
    } catch (error) {
      this.reportStoreFailure(error);
    }
  }

  /**
   * The store was closed under a running Worker (its owner closed the store
   * before the Worker): nothing it does can reach the store again, so it
   * stops, says so once, and lets the process exit, instead of retrying a
   * closed store forever. `close()` then returns at once.
   */
  private stopForClosedStore(error: StoreClosedError): void {
    if (this.state !== "running") return;
    this.state = "closing";
    this.options.onError(new StoreClosedError(`Worker ${this.workerId} stopped: ${error.message}; close a Worker before its store`));
    this.closed ??= (async () => {
      this.withdrawLocalClaims?.();
      this.stopMaintenance?.();
      this.unsubscribe?.();
      this.metrics.stop();
      this.requestWake();
      await this.loopDone;
      this.state = "closed";
      return { released: 0 };
    })();
  }

  /**
   * Aborts running attempts whose execution was cancelled or whose lease was
   * taken over. Attempts waiting for their claim's confirmation are left to
   * it: it answers "not held" for those, and on PostgreSQL it keeps a lock on
   * the execution's row while its commit waits for a standby, which this
   * transaction's first read (the Flow and execution rows `FOR UPDATE`) would
   * wait for, holding up this Worker's liveness writes behind it.
   */
  private async checkCancellations(): Promise<void> {
    const attempts = [...this.running.values()].filter((attempt) => attempt.started === true);
    if (attempts.length === 0) return;
    const lost = await this.options.store.transaction(async (transaction) => {
      const result: RunningAttempt[] = [];
      for (const attempt of attempts) {
        const { flowId, executionId, leaseToken } = attempt.claim.execution;
        const current = await transaction.getExecution(flowId, executionId);
        if (current?.claimedBy !== this.workerId || current.leaseToken !== leaseToken) result.push(attempt);
      }
      return result;
    });
    for (const attempt of lost) attempt.abort.abort(new Error("the execution was cancelled or its lease was lost"));
  }
}
