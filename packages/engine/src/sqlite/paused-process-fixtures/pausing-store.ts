/**
 * A Store around the paused process's SQLite store that calls `pauseHere` at
 * every point of its transactions: at the start of the work, before each
 * StoreTransaction call, and after the work resolved (before COMMIT). Each
 * point is named after the kind of transaction, such as `claim:call-2`.
 */
import { writeSync } from "node:fs";
import type { Store, StoreTransaction, WakeEvent } from "../../store/store.ts";
import type { StoreClock } from "../../store/store-clock.ts";
import { hasPaused, pausePoint, pauseHere } from "./pause-point.ts";

interface Call {
  method: string;
  args: unknown[];
}

/**
 * What the transaction is, from its calls so far: the commit of a Step (the
 * Step names its Flow), a claim, a Worker's idle poll, a liveness write, or
 * the `writeNote` RPC. Only transactions after the paused process holds a
 * Step count.
 */
function kindOf(calls: readonly Call[]): string | undefined {
  const [first] = calls;
  if (first === undefined) return undefined;
  // A commit's fence reads the lease (or, where a store cannot, the whole execution) first.
  if ((first.method === "readLease" || first.method === "getExecution") && first.args[0] === globalThis.perdurePausedCommitArmed) return "commit";
  if (calls.some((call) => call.method === "writeAttribute" && call.args[1] === "Note")) return "rpc";
  if (first.method === "touchWorker") return "liveness";
  if (first.method !== "findClaimable") return undefined;
  const claims = calls.some((call) => call.method === "updateExecution" && (call.args[2] as { claimedBy?: unknown }).claimedBy != null);
  return claims ? "claim" : "poll";
}

export class PausingStore implements Store {
  readonly kind: string;
  readonly maxValueBytes: number;
  readonly pollIntervalMs: number;
  readonly clock: StoreClock;
  private readonly inner: Store;

  constructor(inner: Store) {
    this.inner = inner;
    this.kind = inner.kind;
    this.clock = inner.clock;
    this.maxValueBytes = inner.maxValueBytes;
    this.pollIntervalMs = inner.pollIntervalMs;
  }

  transaction<TResult>(work: (transaction: StoreTransaction) => Promise<TResult>): Promise<TResult> {
    return this.inner.transaction(async (inner) => {
      const counts = globalThis.perdurePausedHolding === true;
      const calls: Call[] = [];
      const pausedBefore = hasPaused();
      // Where this transaction was first seen as each kind: 0 at the start, k at its k-th call.
      const identifiedAt = new Map<string, number>();
      const pauseAt = async (stage: string): Promise<void> => {
        const kind = counts ? kindOf(calls) : undefined;
        if (kind === undefined) return;
        if (!identifiedAt.has(kind)) identifiedAt.set(kind, calls.length);
        await pauseHere(`${kind}:${stage}`);
      };
      const transaction = new Proxy(inner, {
        get: (target, property) => {
          const value = Reflect.get(target, property, target) as unknown;
          if (typeof value !== "function") return value;
          return async (...args: unknown[]): Promise<unknown> => {
            calls.push({ method: String(property), args });
            await pauseAt(`call-${calls.length}`);
            return (value as (...parameters: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });
      let outcome = "rejected";
      try {
        await pauseAt("start");
        const result = await work(transaction);
        await pauseAt("end");
        outcome = "resolved";
        return result;
      } catch (error) {
        outcome = `rejected: ${error instanceof Error ? error.message : String(error)}`;
        throw error;
      } finally {
        const methods = calls.map((call) => call.method).join(" ");
        // The run that paused says how it ended once the process continues.
        if (!pausedBefore && hasPaused()) writeSync(1, `resumed: ${outcome}; calls ${methods}\n`);
        const kind = counts ? kindOf(calls) : undefined;
        if (pausePoint() === "trace" && kind !== undefined) writeSync(1, `transaction ${kind} identified-at ${identifiedAt.get(kind) ?? calls.length} calls ${methods}\n`);
      }
    });
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

  close(): Promise<void> {
    return this.inner.close();
  }
}

declare global {
  var perdurePausedHolding: boolean | undefined;
}
