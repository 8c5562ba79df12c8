/**
 * At most a fixed number of connection checkouts at once; the rest wait in
 * arrival order, for as long as it takes.
 *
 * pg-pool queues checkouts too, but it fails one that waited longer than the
 * connect timeout ("timeout exceeded when trying to connect"). A burst of
 * requests larger than the pool can serve within that time (thousands of
 * RPCs through one store) would then fail though nothing is wrong. Waiting
 * here first means the pool only ever gets as many checkouts as it has
 * connections, so its timeout measures opening a connection, and a burst
 * completes at the pool's pace: the callers' awaits are the backpressure.
 */
export class ConnectionPermits {
  private available: number;
  private readonly waiting: (() => void)[] = [];
  private head = 0;

  constructor(limit: number) {
    this.available = limit;
  }

  /** Checkouts waiting for a permit. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /** Resolves once the caller holds a permit; it must call {@link release} exactly once. */
  acquire(): Promise<void> | undefined {
    if (this.available > 0) {
      this.available -= 1;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Returns a permit: the longest waiting checkout gets it. */
  release(): void {
    const next = this.waiting[this.head];
    if (next === undefined) {
      this.available += 1;
      return;
    }
    this.waiting[this.head] = undefined as unknown as () => void;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    next();
  }
}
