import type { AttributeMapDefinition, AttributeRef } from "../attribute/attribute.ts";
import type { ChannelMessage, ChannelRef } from "../channel/channel.ts";
import type { StreamDefinition } from "../stream/stream.ts";
import type { RecoveryError } from "./recovery-error.ts";

/**
 * What a Step method sees: the snapshot taken when its attempt was dispatched
 * plus its own staged writes. Writes and publishes apply at commit.
 */
export interface StepContext {
  readonly flowId: string;
  readonly flowType: string;
  readonly stepType: string;
  readonly executionId: string;
  /** 1 for the first attempt of this method. */
  readonly attempt: number;
  /** Aborted when the execution is cancelled, times out, or the Worker closes hard. */
  readonly cancellationSignal: AbortSignal;
  /**
   * When this attempt times out, on this process's wall clock, so that
   * `deadline.getTime() - Date.now()` is the time left even on a machine
   * whose clock is off. Store a time with {@link StepContext.now} instead.
   */
  readonly deadline: Date;
  /** Checkpoint text of the latest heartbeat of an earlier attempt of this execution. */
  readonly heartbeatCheckpoint: string | undefined;
  /** Set when this execution is a failure route's recovery Step. */
  readonly recoveryError: RecoveryError | undefined;
  /** Reads a plain Attribute or a loaded map instance; throws `UnloadedStateError` for an unloaded instance. */
  read<TValue>(ref: AttributeRef<TValue>): TValue | undefined;
  /** Stages a write; `null` deletes. */
  write<TValue>(ref: AttributeRef<TValue>, value: TValue | null): void;
  /** Keys of the loaded instances of a map, in key order. */
  loadedKeys(map: AttributeMapDefinition<unknown>): string[];
  /** Stages a publish to a Channel or ChannelMap instance. */
  publish<TMessage>(ref: ChannelRef<TMessage>, message: TMessage): void;
  /** Queued messages of a loaded Channel, oldest first, as of the snapshot. */
  pendingMessages<TMessage>(ref: ChannelRef<TMessage>): ChannelMessage<TMessage>[];
  /**
   * The store's clock, in epoch milliseconds: the clock of Timer due times,
   * leases and stored timestamps, which every process sharing the store
   * reads alike (the database server's on PostgreSQL). Use it for any time a
   * Step stores or compares with a stored time, such as a deadline it writes
   * and waits on with `timer(id, { at })`; `Date.now()` is this machine's
   * clock, which may be minutes off.
   *
   * @example
   * const deadline = context.now() + 60_000;
   * context.write(flow.approvalDeadline, deadline);
   */
  now(): number;
  /**
   * Writes to a Stream while the Step runs, not at commit; never rolled
   * back, may repeat on retry. The Worker queues the message and stores it
   * with others within its batch window (`streamBatchWindowMs`), at the
   * next heartbeat, or with the attempt's commit, whichever comes first;
   * the promise resolves once it is queued.
   */
  writeStream<TValue>(ref: StreamDefinition<TValue>, value: TValue): Promise<void>;
  /**
   * Extends the lease; with `checkpoint`, stores text the next attempt
   * receives. It also stores the Stream messages written before it.
   */
  heartbeat(checkpoint?: string): Promise<void>;
}

/** `execute` also sees what its wait consumed. */
export interface ExecuteContext extends StepContext {
  /** Messages the wait consumed from this Channel, oldest first. */
  consumed<TMessage>(ref: ChannelRef<TMessage>): ChannelMessage<TMessage>[];
  /** True when the wait completed with this Timer fired. */
  timerFired(timerId: string): boolean;
}
