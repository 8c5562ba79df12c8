import { StoreClosedError } from "../errors/store-closed-error.ts";
import type { LocalTimers } from "../internal/local-timers.ts";
import type { StreamAppend } from "../store/step-commit.ts";
import type { Store } from "../store/store.ts";
import { appendStreamBatch, sortedStreamBatch } from "../stream/stream-batch.ts";

/**
 * How long a Stream message may wait in the Worker for others to join its
 * batch, by default (`WorkerOptions.streamBatchWindowMs`): the most a live
 * reader's view lags the Step (plus one write).
 * docs/decisions/2026-12-07-batched-stream-writes.md
 */
export const streamFlushWindowMs = 20;

/** Pending bytes that send a batch at once, without waiting out the window. */
export const streamFlushBytes = 64 * 1024;

/**
 * The Stream writes of one attempt. A write is queued, not awaited: the
 * first one of a batch starts a window (`WorkerOptions.streamBatchWindowMs`), and
 * at its end everything pending goes to the store as one batch (one request
 * on PostgreSQL, one transaction on SQLite). At most one batch is in flight;
 * what is written meanwhile waits for the next window, unless
 * {@link streamFlushBytes} are pending. Batches go in order, so the Stream
 * holds the attempt's messages in the order they were written. When the
 * attempt ends, what is still pending goes with its commit, in the commit's
 * transaction ({@link take}), or, on a store whose commits cannot carry it,
 * in a batch just before the commit: so everything the attempt wrote is in
 * the store no later than its result. A model call that ends within the
 * window makes no Stream write of its own. A heartbeat carries what is
 * pending too ({@link sendWith}), as the batch in flight, so output written
 * before a heartbeat is stored when the heartbeat returns and before
 * anything written after it. A batch that fails is reported and dropped, as a failed write
 * was before (a Stream is best-effort); it takes no index, so the Stream has
 * no gap. A Worker killed mid-attempt loses at most the pending window.
 */
export class AttemptStreamWriter {
  private pending: StreamAppend[] = [];
  private pendingBytes = 0;
  private cancelWindow: (() => void) | undefined;
  private inFlight: Promise<void> | undefined;
  /** The window ended (or a drain asked) while a batch was in flight: send what is pending right after it. */
  private wanted = false;

  private readonly store: Store;
  private readonly flowId: string;
  private readonly flowType: string;
  private readonly timers: LocalTimers;
  private readonly onError: (error: unknown) => void;
  private readonly windowMs: number;

  constructor(store: Store, flowId: string, flowType: string, timers: LocalTimers, onError: (error: unknown) => void, windowMs = streamFlushWindowMs) {
    this.store = store;
    this.flowId = flowId;
    this.flowType = flowType;
    this.timers = timers;
    this.onError = onError;
    this.windowMs = windowMs;
  }

  /** Queues one encoded message; it reaches the store within the window, or at the drain. */
  write(stream: string, capacityBytes: number, value: string): void {
    this.pending.push({ flowId: this.flowId, flowType: this.flowType, stream, value, writtenAt: this.store.clock.now(), capacityBytes });
    this.pendingBytes += value.length;
    if (this.pendingBytes >= streamFlushBytes) {
      void this.flush();
      return;
    }
    this.startWindow();
  }

  private startWindow(): void {
    this.cancelWindow ??= this.timers.after(this.windowMs, () => {
      this.cancelWindow = undefined;
      void this.flush();
    }, { background: true });
  }

  /** Sends everything written so far (and waits for it). */
  async drain(): Promise<void> {
    for (;;) {
      const sending = this.flush();
      if (sending === undefined) return;
      await sending;
    }
  }

  /**
   * Waits for the batch in flight, then hands over what is still pending,
   * sorted as a batch is, instead of sending it: the attempt's commit
   * carries it on a store that appends Streams in its Step commits.
   */
  async take(): Promise<StreamAppend[]> {
    return (await this.takePending()).batch;
  }

  /**
   * Sends what is pending through `send` (a heartbeat that carries it) as
   * this writer's batch in flight, after the one in flight now: later
   * windows and {@link take} wait for it, so each Stream keeps the order of
   * its writes. When `send` fails, its messages go back to the front of the
   * queue for the next write, and the error is `send`'s caller's (they may
   * repeat, should the failed request have landed unseen).
   */
  async sendWith<TResult>(send: (batch: StreamAppend[]) => Promise<TResult>): Promise<TResult> {
    const { batch, bytes: batchBytes } = await this.takePending();
    const sending = send(batch);
    this.inFlight = sending.then(
      () => this.landed(),
      () => {
        this.pending = [...batch, ...this.pending];
        this.pendingBytes += batchBytes;
        this.landed();
      },
    );
    return sending;
  }

  /** Waits for the batch in flight, then empties the queue and its window: what was pending, sorted as a batch is. */
  private async takePending(): Promise<{ batch: StreamAppend[]; bytes: number }> {
    while (this.inFlight !== undefined) await this.inFlight;
    this.cancelWindow?.();
    this.cancelWindow = undefined;
    const taken = { batch: sortedStreamBatch(this.pending), bytes: this.pendingBytes };
    this.pending = [];
    this.pendingBytes = 0;
    return taken;
  }

  /** The batch in flight is settled: what was wanted meanwhile goes now, the rest waits out a window. */
  private landed(): void {
    this.inFlight = undefined;
    if (this.pending.length === 0) return;
    if (this.wanted || this.pendingBytes >= streamFlushBytes) void this.flush();
    else this.startWindow();
  }

  /** Starts sending what is pending (after the batch in flight); the sending, or undefined when nothing is left. */
  private flush(): Promise<void> | undefined {
    this.cancelWindow?.();
    this.cancelWindow = undefined;
    if (this.inFlight !== undefined) {
      this.wanted = true;
      return this.inFlight;
    }
    if (this.pending.length === 0) return undefined;
    this.wanted = true;
    // send() awaits before it clears inFlight, so this assignment comes first.
    this.inFlight = this.send();
    return this.inFlight;
  }

  private async send(): Promise<void> {
    while (this.pending.length > 0 && (this.wanted || this.pendingBytes >= streamFlushBytes)) {
      const batch = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      this.wanted = false;
      try {
        await appendStreamBatch(this.store, batch);
      } catch (error) {
        if (!StoreClosedError.isInstance(error)) this.onError(error);
      }
    }
    this.landed();
  }
}
