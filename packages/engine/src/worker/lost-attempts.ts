/**
 * What a Worker remembers of the attempts it started, so that a store that
 * went back in time (a failover to a standby that lagged) is noticed rather
 * than believed. After its claims were in doubt (a failed claim, a fall of
 * the commit position), the Worker reads each remembered attempt's
 * execution and decides, from what the store durably shows, whether the
 * store still knows that attempt:
 *
 * - the execution is there with this attempt's claim (`executeClaims`, which
 *   only grows) or later ones: known;
 * - it is there with fewer claims, unclaimed and ready: the store forgot the
 *   claim, and with it whatever the attempt committed; it is failed with
 *   `CommitLost` (a single-attempt Step's outcome is then unknown) instead of
 *   claimed as new;
 * - it is there with fewer claims, waiting for its condition again (the
 *   store went back to before the wait ended): it runs again if that is met
 *   again;
 * - it is there with this attempt's claim count but another Worker's claim,
 *   or fewer claims and claimed: another Worker claimed it anew and may run
 *   it a second time;
 * - it is gone, and its history shows another run of this attempt number:
 *   it ran a second time;
 * - the session never got as far as creating it, or that execution number
 *   now holds another Step: the store went back to before it; if the
 *   session creates it again, whoever claims it runs it a second time.
 *
 * Every such attempt is logged by the Worker as an error naming its session,
 * so no second run of a single-attempt write goes unnamed while the Worker
 * that ran it lives. Only `execute` attempts are remembered.
 */
import { createHash } from "node:crypto";
import type { FlowCore } from "../flow/flow.ts";
import { claimableSince, FlowTransaction } from "../flow/flow-transaction.ts";
import type { ExecutionRow, HistoryRow, Store, StoreTransaction } from "../store/store.ts";
import { commitLostError } from "./adopt-lost-claims.ts";
import { failAttempt } from "./attempt-failure.ts";

/** One attempt a Worker started. */
export interface StartedAttempt {
  flowId: string;
  flowType: string;
  executionId: string;
  /** The execution's sequence number in its Flow (the number its ID is made of). */
  seq: number;
  stepType: string;
  attempt: number;
  /** The execution's `executeClaims` with this attempt's claim: it only grows, unlike `attempt`, which a wait's end resets. */
  executeClaims: number;
  /** When it was claimed, on the store's clock: the `startedAt` of the history entry its commit writes. */
  claimedAt: number;
  /** An `execute` with one attempt (`retry.maximumAttempts` 1), such as a `non_idempotent_write` tool call. */
  singleAttempt: boolean;
  /** The execution's input, or a digest of a long one: execution IDs are sequence numbers, which a store that went back in time hands out again. */
  inputKey: string;
  /** Already reported as forgotten by the store: not reported again. */
  reported?: boolean;
}

/** What tells two executions under one ID apart: their Step type and input (a digest past 256 characters). */
export function inputKeyOf(input: string): string {
  return input.length <= 256 ? input : `sha256:${createHash("sha256").update(input).digest("base64")}`;
}

/** True when `row` is the execution `started` ran, not another that reuses its ID. */
export function isSameExecution(started: StartedAttempt, row: Pick<ExecutionRow, "stepType" | "input">): boolean {
  return started.stepType === row.stepType && started.inputKey === inputKeyOf(row.input);
}

/**
 * What a check found the store forgot of one remembered attempt:
 * - `failed`: the execution was unclaimed and ready; recorded as `CommitLost` now;
 * - `waiting-again`: the execution waits for its condition again;
 * - `running-again`: another Worker has claimed it anew;
 * - `ran-again`: it is finished, by a run that is not this attempt;
 * - `missing`: the store has no such execution (the session went back to
 *   before it was created, or the number holds another Step);
 * - `unknown`: it is finished and its history no longer says by whom
 *   (trimmed, or the Flow keeps none); reported only after a fall of the
 *   store's commit position.
 */
export interface LostAttempt {
  started: StartedAttempt;
  action: "failed" | "running-again" | "ran-again" | "missing" | "waiting-again" | "unknown";
  claimedBy: string | null;
}

/** How many started attempts a Worker remembers, newest first. */
const rememberedAttempts = 10_000;

function executionKey(flowId: string, executionId: string): string {
  // One flat string (`join`), not a tree of cons strings: the Worker keeps 10,000 of them.
  return [flowId, executionId].join("\u0000");
}

function callKey(flowId: string, stepType: string, inputKey: string): string {
  return [flowId, stepType, inputKey].join("\u0000");
}

/** The attempts a Worker started, newest last, bounded. */
export class StartedAttempts {
  private readonly byExecution = new Map<string, StartedAttempt>();
  /**
   * Single-attempt attempts the store lost before their execution existed:
   * the session may create the call again under another execution number
   * (sequence numbers taken by other entries since), so they are also found
   * by session, Step type and input.
   */
  private readonly missingCalls = new Map<string, StartedAttempt>();

  add(started: StartedAttempt): void {
    const key = executionKey(started.flowId, started.executionId);
    this.byExecution.delete(key);
    this.byExecution.set(key, started);
    if (this.byExecution.size > rememberedAttempts) {
      const oldest = this.byExecution.keys().next().value;
      if (oldest !== undefined) this.byExecution.delete(oldest);
    }
  }

  /** The remembered attempt of this execution, if any. */
  get(flowId: string, executionId: string): StartedAttempt | undefined {
    return this.byExecution.get(executionKey(flowId, executionId));
  }

  /** Forgets an attempt whose loss is recorded in the store, so later claims of its execution run as usual. */
  forget(started: StartedAttempt): void {
    const key = executionKey(started.flowId, started.executionId);
    if (this.byExecution.get(key) === started) this.byExecution.delete(key);
  }

  /** Remembers a single-attempt attempt the store lost with its execution, to refuse the call if it comes back under another number. */
  addMissing(started: StartedAttempt): void {
    this.missingCalls.set(callKey(started.flowId, started.stepType, started.inputKey), started);
    if (this.missingCalls.size > rememberedAttempts) {
      const oldest = this.missingCalls.keys().next().value;
      if (oldest !== undefined) this.missingCalls.delete(oldest);
    }
  }

  /** Takes the lost single-attempt attempt this execution makes again, if any. */
  takeMissing(execution: Pick<ExecutionRow, "flowId" | "stepType" | "input">): StartedAttempt | undefined {
    if (this.missingCalls.size === 0) return undefined;
    const key = callKey(execution.flowId, execution.stepType, inputKeyOf(execution.input));
    const missing = this.missingCalls.get(key);
    if (missing !== undefined) this.missingCalls.delete(key);
    return missing;
  }

  /** The newest `limit` remembered attempts not yet reported, newest first. */
  recent(limit: number): StartedAttempt[] {
    const attempts = [...this.byExecution.values()];
    const recent: StartedAttempt[] = [];
    for (let index = attempts.length - 1; index >= 0 && recent.length < limit; index -= 1) {
      const started = attempts[index];
      if (started !== undefined && started.reported !== true) recent.push(started);
    }
    return recent;
  }
}

/** How a check judges the remembered attempts. */
export interface LostAttemptCheck {
  workerId: string;
  /**
   * After a fall of the store's commit position: attempts claimed within
   * these times (store clock) are reported when the store cannot tell
   * whether it knows them (`unknown`, or their session is gone). Undefined:
   * such attempts are taken as known.
   */
  unknownWithin: { from: number; to: number } | undefined;
}

/** True when the store's commit position fell just after `started` was claimed, so an attempt it cannot account for is reported. */
function isUncertain(started: StartedAttempt, check: LostAttemptCheck): boolean {
  const within = check.unknownWithin;
  return within !== undefined && started.claimedAt >= within.from && started.claimedAt <= within.to;
}

/** The history entries of one execution's `execute` runs, read from the newest entries the Flow keeps. */
async function executeRunsOf(transaction: StoreTransaction, started: StartedAttempt, nextSeq: number): Promise<HistoryRow[]> {
  // An execution's entries come after its own number, so the entries since then hold them all.
  const limit = Math.max(1, Math.min(1000, nextSeq - started.seq));
  const entries = await transaction.listHistory(started.flowId, limit);
  return entries.filter((entry) => entry.executionId === started.executionId && entry.method === "execute" && entry.stepType === started.stepType);
}

/**
 * Reads each remembered attempt's execution, in the order given (newest
 * first), and hands `found` each the store no longer knows this Worker
 * started as soon as it is known (see the module's comment); fails with
 * `CommitLost` those it shows unclaimed and ready. The caller skips
 * attempts it still runs.
 */
export async function findLostAttempts(store: Store, flows: ReadonlyMap<string, FlowCore>, attempts: readonly StartedAttempt[], check: LostAttemptCheck, found: (lost: LostAttempt) => void): Promise<void> {
  for (const started of attempts) {
    const flow = flows.get(started.flowType);
    if (flow === undefined) continue;
    const changed: FlowTransaction[] = [];
    const lost = await store.transaction(async (transaction): Promise<LostAttempt | undefined> => {
      const row = await transaction.getExecution(started.flowId, started.executionId);
      if (row !== undefined && isSameExecution(started, row)) {
        if (row.executeClaims > started.executeClaims) return undefined;
        if (row.executeClaims === started.executeClaims) {
          // Still this claim (the Worker's lost-claim adoption takes it), or its end recorded (a retry waits).
          if (row.claimedBy === null || row.claimedBy === check.workerId) return undefined;
          return { started, action: "running-again", claimedBy: row.claimedBy };
        }
        if (row.claimedBy !== null) return { started, action: "running-again", claimedBy: row.claimedBy };
        // Back before its wait ended: it runs again only if its condition is met again.
        if (row.status !== "ready") return { started, action: "waiting-again", claimedBy: null };
        const flowTransaction = await FlowTransaction.open(transaction, flow, started.flowId, store.clock.now());
        if (flowTransaction === undefined) return undefined;
        const forgotten: ExecutionRow = { ...row, attempt: started.attempt };
        await failAttempt(flowTransaction, forgotten, commitLostError(forgotten), claimableSince(row));
        await flowTransaction.close();
        changed.push(flowTransaction);
        return { started, action: "failed", claimedBy: null };
      }
      const flowRow = await transaction.lockFlow(started.flowId);
      // The session itself is gone: deleted by retention, or created in the part of the log the store lost.
      if (flowRow === undefined) return isUncertain(started, check) ? { started, action: "missing", claimedBy: null } : undefined;
      // Never created here, or its number holds another Step: the session went back to before it.
      if (row !== undefined || flowRow.nextSeq <= started.seq) return { started, action: "missing", claimedBy: null };
      // Created and finished here: by this attempt's commit, or by another run of it.
      const runs = await executeRunsOf(transaction, started, flowRow.nextSeq);
      if (runs.some((entry) => entry.attempt === started.attempt && entry.startedAt === started.claimedAt)) return undefined;
      if (runs.some((entry) => entry.attempt === started.attempt)) return { started, action: "ran-again", claimedBy: null };
      return isUncertain(started, check) ? { started, action: "unknown", claimedBy: null } : undefined;
    });
    for (const flowTransaction of changed) flowTransaction.announce(store);
    if (lost !== undefined) found(lost);
  }
}
