import { FlowNotRunningError } from "../errors/flow-not-running-error.ts";
import { deliverLocalCommit, type WrittenValue } from "./local-commits.ts";
import type { ExecutionRow, FlowRow, HistoryRow, MessageRow, Store, StoreTransaction } from "../store/store.ts";
import { resolveExecutionOptions } from "../step/execution-options.ts";
import type { StoredConditions, StoredConsumedMessage, StoredWaitResult } from "../step/stored-conditions.ts";
import type { StoredMovementOptions } from "../step/step-options.ts";
import type { FlowCore } from "./flow.ts";
import type { FlowStatus } from "../store/flow-status.ts";

/** A new execution to insert, with every value already encoded. */
export interface EncodedMovement {
  stepType: string;
  input: string;
  options: StoredMovementOptions | null;
  recoveryError: string | null;
}

/**
 * How long a chain of Steps keeps the place in the claim order of the task
 * that started it. A continuation of a chain that has run longer queues
 * behind what is waiting, as a new task would.
 */
export const chainPlaceGraceMs = 120_000;

/** A queued task's place: `availableAt` orders the claims; `scheduledAt` is when its chain started running, or when it was queued. */
export interface QueuePlace {
  availableAt: number;
  scheduledAt: number;
}

/**
 * Where a Step's commit queues the tasks it starts (its movements, and the
 * waits its publishes complete). Claims take the lowest `available_at` first,
 * so a continuation keeps the place of the task that started its chain (a
 * start, an RPC, a fired Timer, a retry) and a turn that started under a
 * backlog finishes before turns that arrived after it. A continuation's
 * `scheduled_at` is when the chain started running (its first claim), which
 * its `available_at` precedes; a task queued afresh has the two equal, or
 * `available_at` later (a retry). A chain that has run longer than
 * {@link chainPlaceGraceMs} queues its next task at `now`, behind everything
 * already waiting, so no chain holds a Worker ahead of others for ever.
 * docs/decisions/2026-12-07-claims-keep-a-chain-in-its-place.md
 */
export function continuationPlace(claimed: Pick<ExecutionRow, "availableAt" | "scheduledAt">, claimedAt: number, now: number): QueuePlace {
  const continues = claimed.availableAt < claimed.scheduledAt;
  const runningSince = continues ? claimed.scheduledAt : Math.max(claimed.availableAt, Math.min(claimedAt, now));
  if (now - runningSince > chainPlaceGraceMs) return { availableAt: now, scheduledAt: now };
  return { availableAt: Math.min(claimed.availableAt, now), scheduledAt: Math.min(runningSince, now) };
}

/** Since when a queued execution has been claimable: a continuation keeps its chain's older `available_at` (its place), so its insertion time counts. */
export function claimableSince(execution: Pick<ExecutionRow, "availableAt" | "createdAt">): number {
  return Math.max(execution.availableAt, execution.createdAt);
}

/**
 * The row of a new execution of `movement`, numbered `seq`: queued to be
 * asked (a Step with `waitUntil`) or ready to execute, with its retry window
 * from the resolved options, queued at `place` (`now`, unless it continues a
 * chain: {@link continuationPlace}). Throws `UnknownStepError` for an
 * unknown Step type.
 */
export function newExecutionRow(flow: FlowCore, flowId: string, seq: number, movement: EncodedMovement, now: number, place?: QueuePlace): ExecutionRow {
  const options = movement.options === null ? null : JSON.stringify(movement.options);
  const resolved = resolveExecutionOptions(flow, movement.stepType, options);
  const asking = resolved.step.waitUntil !== undefined;
  const total = (asking ? resolved.waitUntil : resolved.execute).retry.totalDurationMs;
  return {
    flowId,
    executionId: String(seq),
    seq,
    flowType: flow.flowType,
    stepType: movement.stepType,
    input: movement.input,
    status: asking ? "asking" : "ready",
    claimedBy: null,
    leaseToken: 0,
    leaseExpiresAt: null,
    deadlineAt: null,
    availableAt: place?.availableAt ?? now,
    attempt: 0,
    executeClaims: 0,
    scheduledAt: place?.scheduledAt ?? now,
    expiresAt: total === null ? null : now + total,
    conditions: null,
    waitResult: asking ? null : JSON.stringify({ firedTimers: [], messages: [] } satisfies StoredWaitResult),
    checkpoint: null,
    movementOptions: options,
    recoveryError: movement.recoveryError,
    lastError: null,
    createdAt: now,
  };
}

/**
 * Every change to one Flow instance inside one store transaction goes through
 * here, so Step commits, RPCs, timer firings and stops apply the same rules in
 * the same order: writes, channel deletes then publishes, cancellations, new
 * movements, then condition matching.
 */
export class FlowTransaction {
  readonly transaction: StoreTransaction;
  readonly flow: FlowCore;
  readonly row: FlowRow;
  readonly now: number;
  private seq: number;
  /** Where the tasks this transaction queues go: at `now`, or in a Step commit's chain place ({@link continueChain}). */
  private place: QueuePlace;
  private channelsTouched = false;
  /** An Attribute was written or a message deleted; changes that take no sequence number. */
  private isWritten = false;
  /** The names of the Flow's Attributes this transaction wrote (told to local `waitForAttributes` calls). */
  private readonly writtenNames = new Set<string>();
  /** The last value this transaction wrote to each Attribute or instance, by name and key (told with the names). */
  private readonly writtenValues = new Map<string, WrittenValue>();
  /** Earliest time a task this transaction queued becomes claimable. */
  private earliestTaskAt: number | undefined;
  /** Set when a claimed execution was cancelled, so its Worker should abort it. */
  claimedCancelled = false;
  /** The Flow ended in this transaction. */
  private finished = false;
  /** Earliest due time of a Timer this transaction set and did not fire. */
  private earliestTimerAt: number | undefined;

  private constructor(transaction: StoreTransaction, flow: FlowCore, row: FlowRow, now: number) {
    this.transaction = transaction;
    this.flow = flow;
    this.row = row;
    this.now = now;
    this.place = { availableAt: now, scheduledAt: now };
    this.seq = row.nextSeq;
  }

  /** Locks the Flow row; `undefined` when the Flow does not exist. */
  static async open(transaction: StoreTransaction, flow: FlowCore, flowId: string, now: number): Promise<FlowTransaction | undefined> {
    const row = await transaction.lockFlow(flowId);
    return row === undefined ? undefined : new FlowTransaction(transaction, flow, row, now);
  }

  /** A Step's commit: the tasks it queues keep its chain's place in the claim order ({@link continuationPlace}). */
  continueChain(place: QueuePlace): void {
    this.place = place;
  }

  get flowId(): string {
    return this.row.flowId;
  }

  nextSeq(): number {
    return this.seq++;
  }

  requireRunning(): void {
    if (this.row.status !== "running") {
      throw new FlowNotRunningError(`Flow ${this.flowId} is ${this.row.status}, so it cannot start new Steps`);
    }
  }

  async writeAttribute(name: string, key: string, value: string | null): Promise<void> {
    this.isWritten = true;
    this.writtenNames.add(name);
    this.writtenValues.set(`${name}\u0000${key}`, { name, key, value });
    await this.transaction.writeAttribute(this.flowId, name, key, value);
  }

  async publish(name: string, key: string, value: string): Promise<string> {
    const seq = this.nextSeq();
    // The per-Flow sequence leads, so IDs sort in publish order as strings; the time follows for people.
    const messageId = `${String(seq).padStart(12, "0")}-${this.now}`;
    await this.transaction.insertMessage(this.flowId, { seq, channel: name, key, messageId, value, publishedAt: this.now });
    this.channelsTouched = true;
    return messageId;
  }

  async schedule(movement: EncodedMovement): Promise<string> {
    this.requireRunning();
    const seq = this.nextSeq();
    const row = newExecutionRow(this.flow, this.flowId, seq, movement, this.now, this.place);
    await this.transaction.insertExecution(row);
    this.noteTask(this.now);
    return row.executionId;
  }

  async recordHistory(entry: Omit<HistoryRow, "flowId" | "seq" | "finishedAt">): Promise<void> {
    if (this.flow.historyRetention === 0) return;
    const seq = this.nextSeq();
    await this.transaction.appendHistory({ ...entry, flowId: this.flowId, seq, finishedAt: this.now });
  }

  /** Removes an execution with its timers and locks (`holdsLocks: false` when the caller knows it holds none). */
  async removeExecution(execution: ExecutionRow, options: { holdsLocks?: boolean } = {}): Promise<void> {
    await this.transaction.deleteExecution(this.flowId, execution.executionId);
    if (options.holdsLocks !== false) await this.transaction.releaseLocks(this.flowId, execution.executionId);
    if (execution.status === "waiting") await this.transaction.deleteTimers(this.flowId, execution.executionId);
  }

  async cancelExecutions(executions: readonly ExecutionRow[]): Promise<void> {
    for (const execution of executions) {
      await this.removeExecution(execution);
      if (execution.claimedBy !== null) this.claimedCancelled = true;
      await this.recordHistory({
        executionId: execution.executionId,
        stepType: execution.stepType,
        method: execution.status === "asking" ? "wait_until" : "execute",
        status: "cancelled",
        attempt: execution.attempt,
        startedAt: execution.createdAt,
        outcome: null,
        error: null,
      });
    }
  }

  /** Cancels the unfinished executions of these Step types, except one. */
  async cancelStepTypes(stepTypes: readonly string[], exceptExecutionId?: string): Promise<void> {
    if (stepTypes.length === 0) return;
    const wanted = new Set(stepTypes);
    const executions = await this.transaction.listExecutions(this.flowId);
    await this.cancelExecutions(executions.filter((execution) => wanted.has(execution.stepType) && execution.executionId !== exceptExecutionId));
  }

  /** Ends the Flow and cancels every unfinished execution except one. */
  async finish(status: Exclude<FlowStatus, "running">, fields: { output?: string; error?: string }, exceptExecutionId?: string): Promise<void> {
    const executions = await this.transaction.listExecutions(this.flowId);
    await this.cancelExecutions(executions.filter((execution) => execution.executionId !== exceptExecutionId));
    this.row.status = status;
    await this.transaction.updateFlow(this.flowId, { status, output: fields.output ?? null, error: fields.error ?? null });
    this.finished = true;
  }

  /** Moves a waiting (or just-asked) execution to ready with its wait result, queued at `place`. */
  async makeReady(execution: ExecutionRow, waitResult: StoredWaitResult, place = this.place): Promise<void> {
    const options = resolveExecutionOptions(this.flow, execution.stepType, execution.movementOptions);
    const total = options.execute.retry.totalDurationMs;
    if (execution.status === "waiting") await this.transaction.deleteTimers(this.flowId, execution.executionId);
    await this.transaction.updateExecution(this.flowId, execution.executionId, {
      status: "ready",
      claimedBy: null,
      leaseExpiresAt: null,
      deadlineAt: null,
      availableAt: place.availableAt,
      attempt: 0,
      scheduledAt: place.scheduledAt,
      expiresAt: total === null ? null : this.now + total,
      conditions: null,
      waitResult: JSON.stringify(waitResult),
    });
    execution.status = "ready";
    this.noteTask(this.now);
  }

  /** Stores a wait and matches it at once. */
  async startWaiting(execution: ExecutionRow, conditions: StoredConditions): Promise<void> {
    for (const item of conditions.items) {
      if (item.kind !== "timer") continue;
      // A Timer already due (such as a zero Timer) fires in this commit.
      const fired = item.dueAt <= this.now;
      if (!fired) this.earliestTimerAt = Math.min(this.earliestTimerAt ?? item.dueAt, item.dueAt);
      await this.transaction.insertTimer({
        flowId: this.flowId, flowType: this.flow.flowType, executionId: execution.executionId, timerId: item.timerId, dueAt: item.dueAt, fired,
      });
    }
    const conditionsText = JSON.stringify(conditions);
    await this.transaction.updateExecution(this.flowId, execution.executionId, {
      status: "waiting", claimedBy: null, leaseExpiresAt: null, deadlineAt: null, conditions: conditionsText,
    });
    execution.status = "waiting";
    execution.conditions = conditionsText;
    await this.tryCompleteWait(execution, conditions);
  }

  /** Re-evaluates every waiting execution of the Flow, oldest first, when messages were published. */
  async matchWaitsIfTouched(): Promise<void> {
    if (!this.channelsTouched) return;
    this.channelsTouched = false;
    const executions = await this.transaction.listExecutions(this.flowId, "waiting");
    for (const execution of executions) {
      if (execution.status !== "waiting" || execution.conditions === null) continue;
      await this.tryCompleteWait(execution, JSON.parse(execution.conditions) as StoredConditions);
    }
  }

  /**
   * Matches one wait. Any-of: a fired Timer wins (first declared), else the
   * first ready Channel condition. All-of: every Timer fired and every Channel
   * ready. Only the winning conditions consume; losers' messages stay queued.
   * A Timer due at this commit's time counts as fired whether or not a Worker
   * has fired it yet, so which condition wins follows the store's clock and
   * commit order, never when a Worker last looked at its Timers
   * (docs/decisions/2026-12-07-a-due-timer-wins-its-wait.md).
   */
  async tryCompleteWait(execution: ExecutionRow, conditions: StoredConditions): Promise<boolean> {
    const hasTimers = conditions.items.some((item) => item.kind === "timer");
    const timers = hasTimers ? await this.transaction.listTimers(this.flowId, execution.executionId) : [];
    const fired = new Set(timers.filter((timer) => timer.fired || timer.dueAt <= this.now).map((timer) => timer.timerId));
    const firedTimers: string[] = [];
    const consumed: StoredConsumedMessage[] = [];
    if (conditions.mode === "any_of") {
      const winningTimer = conditions.items.find((item) => item.kind === "timer" && fired.has(item.timerId));
      if (winningTimer?.kind === "timer") {
        firedTimers.push(winningTimer.timerId);
      } else {
        let won = conditions.items.length === 0;
        for (const item of conditions.items) {
          if (item.kind !== "channel") continue;
          const taken = await this.takeIfReady(item);
          if (taken !== undefined) {
            consumed.push(...taken);
            won = true;
            break;
          }
        }
        if (!won) return false;
      }
    } else {
      for (const item of conditions.items) {
        if (item.kind === "timer") {
          if (!fired.has(item.timerId)) return false;
          firedTimers.push(item.timerId);
        }
      }
      const pending: StoredConsumedMessage[][] = [];
      for (const item of conditions.items) {
        if (item.kind !== "channel") continue;
        const taken = await this.takeIfReady(item, pending.flat());
        if (taken === undefined) return false;
        pending.push(taken);
      }
      consumed.push(...pending.flat());
    }
    for (const message of consumed) await this.deleteMessage(message.messageId);
    await this.makeReady(execution, { firedTimers, messages: consumed });
    return true;
  }

  /** The messages a Channel condition would consume now, or undefined when it is not ready. */
  private async takeIfReady(
    item: Extract<StoredConditions["items"][number], { kind: "channel" }>,
    alreadyTaken: readonly StoredConsumedMessage[] = [],
  ): Promise<StoredConsumedMessage[] | undefined> {
    const skip = new Set(alreadyTaken.map((message) => message.messageId));
    const limit = item.bound === "at_least" ? undefined : item.count + skip.size;
    const rows = (await this.transaction.listMessages(this.flowId, item.name, item.key, limit)).filter((row) => !skip.has(row.messageId));
    const needed = item.bound === "at_most" ? 1 : item.count;
    if (rows.length < needed) return undefined;
    const taking: MessageRow[] = item.bound === "at_least" ? rows : rows.slice(0, item.count);
    return taking.map((row) => ({ name: item.name, key: item.key, messageId: row.messageId, value: row.value, publishedAt: row.publishedAt }));
  }

  /** Deletes a queued message by ID; false when it is gone. */
  async deleteMessage(messageId: string): Promise<boolean> {
    this.isWritten = true;
    return this.transaction.deleteMessage(this.flowId, messageId);
  }

  /**
   * Matches waits touched by publishes and writes the Flow's counters back.
   * A transaction that changed nothing of the Flow leaves its row alone, so
   * reading (an RPC that only reads, a snapshot) never moves `updatedAt`.
   */
  async close(): Promise<void> {
    await this.matchWaitsIfTouched();
    if (this.seq === this.row.nextSeq && !this.isWritten) return;
    await this.transaction.updateFlow(this.flowId, { nextSeq: this.seq, updatedAt: this.now });
    // Trimming costs a query, so it runs each time the Flow's sequence crosses a multiple of 64.
    if (this.flow.historyRetention > 0 && Math.floor(this.seq / 64) !== Math.floor(this.row.nextSeq / 64)) {
      await this.transaction.trimHistory(this.flowId, this.flow.historyRetention);
    }
  }

  /** When the earliest task this transaction queued becomes claimable; undefined when it queued none. */
  get earliestTask(): number | undefined {
    return this.earliestTaskAt;
  }

  /** Records that a task becomes claimable at `at`, so Workers learn when to look. */
  noteTask(at: number): void {
    this.earliestTaskAt = Math.min(this.earliestTaskAt ?? at, at);
  }

  /**
   * Tells Workers what changed; call after the transaction committed. A
   * committing Worker that already claimed every task it could passes
   * `tasks: false`; tasks that become claimable later are always announced.
   */
  announce(store: Store, options: { tasks?: boolean } = {}): void {
    const taskAt = this.earliestTaskAt;
    if (taskAt !== undefined && (taskAt > this.now || options.tasks !== false)) store.wake({ kind: "tasks", at: taskAt });
    if (this.earliestTimerAt !== undefined) store.wake({ kind: "timers", dueAt: this.earliestTimerAt });
    if (this.claimedCancelled) store.wake({ kind: "executions_cancelled", flowId: this.flowId });
    if (this.finished) store.wake({ kind: "flow_finished", flowId: this.flowId });
    if (this.writtenNames.size > 0) deliverLocalCommit(store, this.flowId, this.writtenNames, [...this.writtenValues.values()]);
  }
}
