/** A Store wrapper that fails chosen or seeded-random transactions with realistic storage faults. */
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { OneRequestOperations } from "../store/step-commit.ts";
import type { Store, StoreTransaction, WakeEvent } from "../store/store.ts";
import type { StoreClock } from "../store/store-clock.ts";
import { seededRandom } from "./seeded-random.ts";
import { storeFaultError, storeFaultKinds, type StoreCall, type StoreFaultKind, type StoreFaultPoint } from "./store-fault.ts";

/** Options of {@link FaultInjectingStore}. */
export interface FaultInjectingStoreOptions {
  /**
   * Seed of the random fault schedule: the same seed makes the same sequence
   * of decisions. Which transaction meets which decision follows the order
   * the calls arrive in, so concurrent runs replay closely, not exactly.
   * @default 1
   */
  seed?: number;
  /**
   * Share of `transaction` calls that fail, at begin or at commit.
   * @default 0.1
   */
  transactionFaultRate?: number;
  /**
   * Share of StoreTransaction method calls that fail (never with
   * `commit-outcome-unknown`).
   * @default 0
   */
  methodFaultRate?: number;
  /**
   * The faults to draw from.
   * @default for a `sqlite` store `busy`, `io-error`, `disk-full` and `commit-outcome-unknown`;
   * for any other `connection-reset` and `commit-outcome-unknown`
   */
  faults?: readonly StoreFaultKind[];
  /**
   * Whether a failed method call ends its transaction, as on PostgreSQL,
   * where later statements fail and the transaction rolls back even if the
   * work catches the error. `false` lets the work carry on, as SQLite may
   * after a failed statement.
   * @default true
   */
  methodFaultEndsTransaction?: boolean;
  /**
   * Decides the fault at each point: gets the seeded decision and returns it,
   * another kind, or undefined for none. Use it to fail one chosen call.
   * @default returns the seeded decision
   */
  chooseFault?: (point: StoreFaultPoint, seeded: StoreFaultKind | undefined) => StoreFaultKind | undefined;
  /**
   * Whether faults are injected from the start; see `injecting`.
   * @default true
   */
  injecting?: boolean;
  /**
   * Offers the inner store's one-request operations (`Store.oneRequest`),
   * each request failing as a transaction would: a fault drawn for it
   * strikes before it runs, except `commit-outcome-unknown`, which strikes
   * after it ran (it landed; the caller gets an error). Without it the
   * wrapper offers none, and the engine takes its general transaction
   * paths only.
   * @default false
   */
  oneRequest?: boolean;
}

interface ResolvedFaultInjectingStoreOptions {
  seed: number;
  transactionFaultRate: number;
  methodFaultRate: number;
  faults: readonly StoreFaultKind[];
  methodFaultEndsTransaction: boolean;
  chooseFault: (point: StoreFaultPoint, seeded: StoreFaultKind | undefined) => StoreFaultKind | undefined;
  injecting: boolean;
  oneRequest: boolean;
}

function resolveFaultInjectingStoreOptions(options: FaultInjectingStoreOptions, storeKind: string): ResolvedFaultInjectingStoreOptions {
  const rate = (name: string, value: number | undefined, fallback: number): number => {
    const resolved = value ?? fallback;
    if (typeof resolved !== "number" || !(resolved >= 0 && resolved <= 1)) throw new InvalidInputError(`FaultInjectingStore option ${name} ${String(value)} is invalid: use a number from 0 to 1`);
    return resolved;
  };
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new InvalidInputError(`FaultInjectingStore seed ${String(seed)} is invalid: use an integer`);
  const faults = options.faults ?? (storeKind === "sqlite" ? ["busy", "io-error", "disk-full", "commit-outcome-unknown"] : ["connection-reset", "commit-outcome-unknown"]);
  const unknown = faults.filter((kind) => !storeFaultKinds.includes(kind));
  if (faults.length === 0 || unknown.length > 0) {
    throw new InvalidInputError(`FaultInjectingStore faults ${JSON.stringify(faults)} are invalid: choose one or more of ${storeFaultKinds.join(", ")}`);
  }
  return {
    seed,
    transactionFaultRate: rate("transactionFaultRate", options.transactionFaultRate, 0.1),
    methodFaultRate: rate("methodFaultRate", options.methodFaultRate, 0),
    faults,
    methodFaultEndsTransaction: options.methodFaultEndsTransaction ?? true,
    chooseFault: options.chooseFault ?? ((_point, seeded) => seeded),
    injecting: options.injecting ?? true,
    oneRequest: options.oneRequest ?? false,
  };
}

/**
 * A {@link Store} around a real one that fails some of its transactions the
 * way databases fail: a locked database, an I/O error, a full disk, a reset
 * connection, or a commit whose reply is lost (it lands, the caller gets an
 * error). Errors look like the driver's; `injectedFaultOf(error)` tells them
 * apart. Faults strike before the work runs, instead of a method call, or at
 * commit; all but `commit-outcome-unknown` roll the transaction back.
 * Everything else (wake-ups, tokens, `close`) goes straight to the inner store.
 *
 * @example
 * const faulty = new FaultInjectingStore(temporary.store, { seed: 7, transactionFaultRate: 0.2 });
 * const worker = new Worker({ store: faulty, flows: [orderFlow] });
 * // ... run the workload, then check that it finishes once faults stop:
 * faulty.injecting = false;
 * console.log(faulty.injected); // { busy: 3, "io-error": 1, ... }
 */
export class FaultInjectingStore implements Store {
  readonly kind: string;
  readonly maxValueBytes: number;
  readonly pollIntervalMs: number;
  readonly clock: StoreClock;
  /** Faults injected so far, by kind. */
  readonly injected: Record<StoreFaultKind, number> = { "busy": 0, "io-error": 0, "disk-full": 0, "connection-reset": 0, "commit-outcome-unknown": 0 };
  /** The switch: while false, every call goes through untouched (counted, never failed). */
  injecting: boolean;
  /** The inner store's one-request operations with faults (see `FaultInjectingStoreOptions.oneRequest`). */
  readonly oneRequest: OneRequestOperations | undefined;
  private readonly inner: Store;
  private readonly options: ResolvedFaultInjectingStoreOptions;
  private readonly random: () => number;
  private transactions = 0;

  constructor(inner: Store, options: FaultInjectingStoreOptions = {}) {
    this.options = resolveFaultInjectingStoreOptions(options, inner.kind);
    this.inner = inner;
    this.kind = inner.kind;
    this.clock = inner.clock;
    this.maxValueBytes = inner.maxValueBytes;
    this.pollIntervalMs = inner.pollIntervalMs;
    this.injecting = this.options.injecting;
    this.random = seededRandom(this.options.seed);
    this.oneRequest = this.options.oneRequest && inner.oneRequest !== undefined ? this.failingRequests(inner.oneRequest) : undefined;
  }

  /** Faults injected so far, of all kinds. */
  get injectedTotal(): number {
    return Object.values(this.injected).reduce((sum, count) => sum + count, 0);
  }

  /** `transaction` calls so far, failed or not. */
  get transactionCount(): number {
    return this.transactions;
  }

  async transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    const number = this.transactions++;
    const planned = this.planTransaction();
    const beginFault = this.decide({ transaction: number, stage: "begin", method: undefined, calls: [] }, planned?.stage === "begin" ? planned.kind : undefined);
    if (beginFault !== undefined) throw this.inject(beginFault);
    let outcomeUnknown: StoreFaultKind | undefined;
    const result = await this.inner.transaction(async (innerTransaction) => {
      // A store may run the work again (PostgreSQL after a serialization failure): each run starts clean.
      const calls: StoreCall[] = [];
      let doomedBy: Error | undefined;
      const transaction = this.wrapTransaction(innerTransaction, number, calls, (error) => {
        if (this.options.methodFaultEndsTransaction) doomedBy ??= error;
      }, () => doomedBy);
      const value = await work(transaction);
      if (doomedBy !== undefined) throw doomedBy;
      const commitFault = this.decide({ transaction: number, stage: "commit", method: undefined, calls }, planned?.stage === "commit" ? planned.kind : undefined);
      if (commitFault === "commit-outcome-unknown") outcomeUnknown = commitFault;
      else if (commitFault !== undefined) throw this.inject(commitFault);
      return value;
    });
    if (outcomeUnknown !== undefined) throw this.inject(outcomeUnknown);
    return result;
  }

  wake(event: WakeEvent): void {
    this.inner.wake(event);
  }

  subscribe(listener: (event: WakeEvent) => void): () => void {
    return this.inner.subscribe(listener);
  }

  tokenSecret(): Promise<Buffer> {
    return this.inner.tokenSecret();
  }

  /** Closes the inner store. */
  close(): Promise<void> {
    return this.inner.close();
  }

  /** `operations` with each request counted and failed as a transaction (see `FaultInjectingStoreOptions.oneRequest`). */
  private failingRequests(operations: OneRequestOperations): OneRequestOperations {
    return new Proxy(operations, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== "function") return value;
        return async (...args: unknown[]): Promise<unknown> => {
          const number = this.transactions++;
          const planned = this.planTransaction();
          // One request cannot land and then roll back: a fault other than a lost reply strikes before it runs.
          const lostReply = planned?.kind === "commit-outcome-unknown";
          const beginFault = this.decide({ transaction: number, stage: "begin", method: undefined, calls: [] }, planned !== undefined && !lostReply ? planned.kind : undefined);
          if (beginFault !== undefined) throw this.inject(beginFault);
          const result = await (value as (...callArgs: unknown[]) => Promise<unknown>).apply(target, args);
          const commitFault = this.decide({ transaction: number, stage: "commit", method: undefined, calls: [] }, lostReply ? planned.kind : undefined);
          if (commitFault !== undefined) throw this.inject("commit-outcome-unknown");
          return result;
        };
      },
    });
  }

  /** The seeded decision for one transaction: whether it fails, how, and where. */
  private planTransaction(): { kind: StoreFaultKind; stage: "begin" | "commit" } | undefined {
    // No draws while paused, so a schedule starts from its seed whenever injecting starts.
    if (!this.injecting || this.options.transactionFaultRate === 0 || this.random() >= this.options.transactionFaultRate) return undefined;
    const kind = this.pick(this.options.faults);
    if (kind === undefined) return undefined;
    // A lock is met when the transaction starts; other faults strike at either end.
    const atCommit = kind === "commit-outcome-unknown" || (kind !== "busy" && this.random() < 0.5);
    return { kind, stage: atCommit ? "commit" : "begin" };
  }

  private pick(kinds: readonly StoreFaultKind[]): StoreFaultKind | undefined {
    return kinds[Math.floor(this.random() * kinds.length)];
  }

  private decide(point: StoreFaultPoint, seeded: StoreFaultKind | undefined): StoreFaultKind | undefined {
    if (!this.injecting) return undefined;
    const kind = this.options.chooseFault(point, seeded);
    if (kind === "commit-outcome-unknown" && point.stage !== "commit") {
      throw new InvalidInputError(`FaultInjectingStore chooseFault returned commit-outcome-unknown at stage ${point.stage}: that fault can only strike at commit`);
    }
    return kind;
  }

  private inject(kind: StoreFaultKind): Error {
    this.injected[kind] += 1;
    return storeFaultError(kind, this.inner.kind);
  }

  private wrapTransaction(
    inner: StoreTransaction,
    number: number,
    calls: StoreCall[],
    onMethodFault: (error: Error) => void,
    doomedBy: () => Error | undefined,
  ): StoreTransaction {
    const methodFaults = this.options.faults.filter((kind) => kind !== "commit-outcome-unknown");
    return new Proxy(inner, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== "function" || typeof property !== "string") return value;
        const method = property as keyof StoreTransaction;
        return async (...args: unknown[]): Promise<unknown> => {
          const doomed = doomedBy();
          if (doomed !== undefined) throw doomed;
          const drawn = this.injecting && this.options.methodFaultRate > 0 && this.random() < this.options.methodFaultRate ? this.pick(methodFaults) : undefined;
          const fault = this.decide({ transaction: number, stage: "method", method, calls }, drawn);
          if (fault !== undefined) {
            const error = this.inject(fault);
            onMethodFault(error);
            throw error;
          }
          calls.push({ method, args });
          return (value as (...callArgs: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
  }
}
