/**
 * What a Worker remembers of the attempts it started, so that a store that
 * went back in time (a failover to a standby that lagged) is noticed rather
 * than believed: an execution whose stored claim count is below one this
 * Worker started lost that claim (counted by `executeClaims`, which only
 * grows; only `execute` attempts are remembered), and with it whatever the attempt
 * committed. Such an attempt is failed with `CommitLost` (a single-attempt
 * Step's outcome is then unknown) instead of being claimed as new.
 */
import { createHash } from "node:crypto";
import type { FlowCore } from "../flow/flow.ts";
import { claimableSince, FlowTransaction } from "../flow/flow-transaction.ts";
import type { ExecutionRow, Store } from "../store/store.ts";
import { commitLostError } from "./adopt-lost-claims.ts";
import { failAttempt } from "./attempt-failure.ts";

/** One attempt a Worker started. */
export interface StartedAttempt {
  flowId: string;
  flowType: string;
  executionId: string;
  stepType: string;
  attempt: number;
  /** The execution's `executeClaims` with this attempt's claim: it only grows, unlike `attempt`, which a wait's end resets. */
  executeClaims: number;
  /** The execution's input, or a digest of a long one: execution IDs are sequence numbers, which a store that went back in time hands out again. */
  inputKey: string;
}

/** What tells two executions under one ID apart: their Step type and input (a digest past 256 characters). */
export function inputKeyOf(input: string): string {
  return input.length <= 256 ? input : `sha256:${createHash("sha256").update(input).digest("base64")}`;
}

/** True when `row` is the execution `started` ran, not another that reuses its ID. */
export function isSameExecution(started: StartedAttempt, row: Pick<ExecutionRow, "stepType" | "input">): boolean {
  return started.stepType === row.stepType && started.inputKey === inputKeyOf(row.input);
}

/** What a check of the remembered attempts found for one of them. */
export interface LostAttempt {
  started: StartedAttempt;
  /** `failed`: recorded as `CommitLost` now; `running-again`: another Worker already claimed it anew. */
  action: "failed" | "running-again";
  claimedBy: string | null;
}

/** How many started attempts a Worker remembers, newest first. */
const rememberedAttempts = 10_000;

/** The attempts a Worker started, newest last, bounded. */
export class StartedAttempts {
  private readonly byExecution = new Map<string, StartedAttempt>();

  add(started: StartedAttempt): void {
    // One flat string (`join`), not a tree of cons strings: the Worker keeps 10,000 of them.
    const key = [started.flowId, started.executionId].join("\u0000");
    this.byExecution.delete(key);
    this.byExecution.set(key, started);
    if (this.byExecution.size > rememberedAttempts) {
      const oldest = this.byExecution.keys().next().value;
      if (oldest !== undefined) this.byExecution.delete(oldest);
    }
  }

  /** The remembered attempt of this execution, if any. */
  get(flowId: string, executionId: string): StartedAttempt | undefined {
    return this.byExecution.get([flowId, executionId].join("\u0000"));
  }

  /** The newest `limit` remembered attempts. */
  recent(limit: number): StartedAttempt[] {
    return [...this.byExecution.values()].slice(-limit);
  }
}

/**
 * Reads each remembered attempt's execution and fails those the store has
 * forgotten this Worker claimed (their stored attempt number is lower). The
 * caller skips attempts it still runs.
 */
export async function findLostAttempts(store: Store, flows: ReadonlyMap<string, FlowCore>, attempts: readonly StartedAttempt[]): Promise<LostAttempt[]> {
  const lost: LostAttempt[] = [];
  for (const started of attempts) {
    const flow = flows.get(started.flowType);
    if (flow === undefined) continue;
    const changed: FlowTransaction[] = [];
    const found = await store.transaction(async (transaction): Promise<LostAttempt | undefined> => {
      const row = await transaction.getExecution(started.flowId, started.executionId);
      if (row === undefined || row.executeClaims >= started.executeClaims || !isSameExecution(started, row)) return undefined;
      if (row.claimedBy !== null) return { started, action: "running-again", claimedBy: row.claimedBy };
      const flowTransaction = await FlowTransaction.open(transaction, flow, started.flowId, store.clock.now());
      if (flowTransaction === undefined) return undefined;
      const forgotten: ExecutionRow = { ...row, attempt: started.attempt };
      await failAttempt(flowTransaction, forgotten, commitLostError(forgotten), claimableSince(row));
      await flowTransaction.close();
      changed.push(flowTransaction);
      return { started, action: "failed", claimedBy: null };
    });
    for (const flowTransaction of changed) flowTransaction.announce(store);
    if (found !== undefined) lost.push(found);
  }
  return lost;
}
