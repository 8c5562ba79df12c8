/**
 * One simulated process's handle on the shared store: reads the virtual
 * clock, delays each transaction by a seeded latency on the process's own
 * timers, and dies with the process. It records the writes of every
 * transaction whose success reached the process, so the checker can prove
 * no acknowledged commit was lost.
 */
import type { OneRequestOperations, StepCommit, StepCommitReply } from "../../store/step-commit.ts";
import type { Store, StoreTransaction, WakeEvent } from "../../store/store.ts";
import type { StoreClock } from "../../store/store-clock.ts";
import type { TimerGroup } from "./virtual-scheduler.ts";

/** An Attribute write a process saw committed. */
export interface AcknowledgedWrite {
  process: string;
  flowId: string;
  name: string;
  key: string;
  value: string | null;
}

/** Options of {@link SimulatedProcessStore}. */
export interface SimulatedProcessStoreOptions {
  /** The store below (a FaultInjectingStore around the shared SQLite store). */
  inner: Store;
  timers: TimerGroup;
  clock: StoreClock;
  /** Draws one latency in virtual milliseconds: before a transaction starts, and before its reply arrives. */
  latencyMs: () => number;
  pollIntervalMs: number;
  /** Attribute(Map) names whose acknowledged writes must survive. */
  trackedNames: ReadonlySet<string>;
  acknowledged: AcknowledgedWrite[];
  trace: (line: string) => void;
}

/** A reply a dead process never hears. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

/** Thrown by every call a crashed process makes. */
export class SimulatedCrashError extends Error {
  constructor(processName: string) {
    super(`simulated process ${processName} has crashed`);
    this.name = "SimulatedCrashError";
  }
}

export class SimulatedProcessStore implements Store {
  readonly kind: string;
  readonly maxValueBytes: number;
  readonly pollIntervalMs: number;
  readonly clock: StoreClock;
  /** The inner store's one-request operations, if it offers them, each request delayed, traced and dying with the process like a transaction. */
  readonly oneRequest: OneRequestOperations | undefined;
  private readonly options: SimulatedProcessStoreOptions;
  private transactions = 0;

  constructor(options: SimulatedProcessStoreOptions) {
    this.options = options;
    this.kind = options.inner.kind;
    this.maxValueBytes = options.inner.maxValueBytes;
    this.pollIntervalMs = options.pollIntervalMs;
    this.clock = options.clock;
    this.oneRequest = options.inner.oneRequest === undefined ? undefined : this.processRequests(options.inner.oneRequest);
  }

  private get name(): string {
    return this.options.timers.name;
  }

  async transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    let writes: AcknowledgedWrite[] = [];
    return this.roundTrip((number) => `tx${number}`, () => this.options.inner.transaction((transaction) => {
      writes = [];
      return work(this.recordWrites(transaction, writes));
    }), () => this.options.acknowledged.push(...writes));
  }

  /**
   * One request of this process to the store below, as the process sees it:
   * a latency there and back, a trace line, and `acknowledge` once its
   * success reached the process. Pending forever once the process crashes:
   * a dead process hears no reply, and traces nothing.
   */
  private async roundTrip<TResult>(label: (number: number) => string, run: () => Promise<TResult>, acknowledge: (value: TResult) => void): Promise<TResult> {
    const { timers, trace } = this.options;
    if (timers.crashed) throw new SimulatedCrashError(this.name);
    const number = this.transactions++;
    await timers.sleep(this.options.latencyMs());
    let outcome: { ok: true; value: TResult } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await run() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // The process died (or the run ended) meanwhile.
    if (timers.crashed) return await never<TResult>();
    trace(`${this.name} ${label(number)} ${outcome.ok ? "ok" : `failed ${String((outcome.error as { message?: unknown } | null)?.message ?? outcome.error)}`}`);
    await timers.sleep(this.options.latencyMs());
    if (!outcome.ok) throw outcome.error;
    acknowledge(outcome.value);
    return outcome.value;
  }

  /** `operations`, each request a {@link roundTrip} of this process; a committed Step commit's tracked writes are acknowledged. */
  private processRequests(operations: OneRequestOperations): OneRequestOperations {
    return new Proxy(operations, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]): Promise<unknown> => this.roundTrip(
          (number) => `req${number} ${String(property)}`,
          () => (value as (...callArgs: unknown[]) => Promise<unknown>).apply(target, args),
          (reply) => {
            if (property === "commitStep" && (reply as StepCommitReply).outcome === "committed") this.acknowledge(args[0] as StepCommit);
          },
        );
      },
    });
  }

  /** The tracked writes of a committed one-request Step commit, as `recordWrites` records a transaction's. */
  private acknowledge(commit: StepCommit): void {
    const { trackedNames, acknowledged } = this.options;
    for (const write of commit.writes) {
      if (trackedNames.has(write.name)) acknowledged.push({ process: this.name, flowId: commit.flowId, name: write.name, key: write.key, value: write.value });
    }
  }

  private recordWrites(transaction: StoreTransaction, writes: AcknowledgedWrite[]): StoreTransaction {
    const { trackedNames } = this.options;
    const process = this.name;
    return new Proxy(transaction, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== "writeAttribute" || typeof value !== "function") return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        return (flowId: string, name: string, key: string, written: string | null) => {
          if (trackedNames.has(name)) writes.push({ process, flowId, name, key, value: written });
          return (value as StoreTransaction["writeAttribute"]).call(target, flowId, name, key, written);
        };
      },
    });
  }

  wake(event: WakeEvent): void {
    if (this.options.timers.crashed) return;
    this.options.inner.wake(event);
  }

  subscribe(listener: (event: WakeEvent) => void): () => void {
    const { timers } = this.options;
    // A stopped or dead process reacts to nothing; wake-ups are hints, and its polls find the work later.
    return this.options.inner.subscribe((event) => {
      if (!timers.crashed && !timers.isPaused) listener(event);
    });
  }

  tokenSecret(): Promise<Buffer> {
    return this.options.inner.tokenSecret();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
