/** The types a claim and a Step commit are made of, shared by the general and the one-request paths. */
import type { EncodedMovement } from "../flow/flow-transaction.ts";
import type { FlowCore } from "../flow/flow.ts";
import type { AttemptError } from "./attempt-failure.ts";
import type { ExecutionOptions } from "../step/execution-options.ts";
import type { ResolvedMethodOptions } from "../step/step-options.ts";
import type { ExecutionRow } from "../store/store.ts";
import type { Conditions } from "../condition/condition.ts";
import type { StagedWrite } from "./attempt-context.ts";
import type { Snapshot } from "./snapshot.ts";

/** An `execute` decision with every value encoded, ready to commit. */
export interface PreparedDecision {
  kind: "move" | "dead_end" | "complete" | "fail";
  movements: EncodedMovement[];
  cancelStepTypes: readonly string[];
  output: string | undefined;
  error: string | undefined;
}

/** What an attempt produced. */
export type AttemptOutcome =
  | { kind: "wait_until"; conditions: Conditions | null; writes: readonly StagedWrite[]; publishes: readonly StagedWrite[] }
  | { kind: "execute"; decision: PreparedDecision; writes: readonly StagedWrite[]; publishes: readonly StagedWrite[] }
  | { kind: "error"; error: AttemptError };

/** Which tasks the committing Worker takes next, in the same transaction. */
export interface ClaimNext {
  flows: ReadonlyMap<string, FlowCore>;
  /** Free slots, counting the one this attempt is about to free. */
  limit: number;
}

/** One attempt a Worker holds a lease on, with the snapshot taken at claim. */
export interface ClaimedAttempt {
  flow: FlowCore;
  execution: ExecutionRow;
  options: ExecutionOptions;
  method: "wait_until" | "execute";
  methodOptions: ResolvedMethodOptions;
  input: unknown;
  snapshot: Snapshot;
  claimedAt: number;
  /** The snapshot holds the attempt's whole selection, read in the claim. */
  snapshotLoaded?: boolean;
}
