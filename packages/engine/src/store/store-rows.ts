/**
 * The rows of the Store contract: what each table of a store holds, as the
 * engine reads and writes it. JSON columns hold encoded text.
 */
import type { FlowStatus } from "./flow-status.ts";

/** A Flow instance row. JSON columns hold encoded text. */
export interface FlowRow {
  flowId: string;
  flowType: string;
  status: FlowStatus;
  input: string;
  output: string | null;
  error: string | null;
  requestId: string | null;
  createdAt: number;
  updatedAt: number;
  /** Next sequence number for executions, messages and history entries of this Flow. */
  nextSeq: number;
}

/** Where a Step execution is in its life; finished executions are deleted. */
export type ExecutionStatus = "asking" | "waiting" | "ready";

export interface ExecutionRow {
  flowId: string;
  executionId: string;
  seq: number;
  flowType: string;
  stepType: string;
  input: string;
  status: ExecutionStatus;
  /** Worker holding the lease, or null when queued or waiting. */
  claimedBy: string | null;
  /** Bumped on every claim; a commit must present the token it claimed with. */
  leaseToken: number;
  leaseExpiresAt: number | null;
  deadlineAt: number | null;
  /** Queued tasks are claimable from this time. */
  availableAt: number;
  /** Attempts of the current method claimed so far. */
  attempt: number;
  /** Attempts of `execute` ever claimed (for `attemptProgress`). */
  executeClaims: number;
  /** When the current method was first scheduled. */
  scheduledAt: number;
  /** No new attempt of the current method starts after this time. */
  expiresAt: number | null;
  conditions: string | null;
  waitResult: string | null;
  checkpoint: string | null;
  movementOptions: string | null;
  recoveryError: string | null;
  lastError: string | null;
  createdAt: number;
}

/** Who holds an execution's lease, with which token: what a commit's fence compares. */
export type ExecutionLease = Pick<ExecutionRow, "claimedBy" | "leaseToken">;

export interface AttributeRow {
  name: string;
  key: string;
  value: string;
}

export interface MessageRow {
  seq: number;
  channel: string;
  key: string;
  messageId: string;
  value: string;
  publishedAt: number;
}

export interface TimerRow {
  flowId: string;
  flowType: string;
  executionId: string;
  timerId: string;
  dueAt: number;
  fired: boolean;
}

export interface HistoryRow {
  flowId: string;
  seq: number;
  executionId: string;
  stepType: string;
  method: "wait_until" | "execute";
  /** `completed` for a committed method, `failed` for a failed attempt, `cancelled` for a cancelled execution. */
  status: "completed" | "failed" | "cancelled";
  attempt: number;
  startedAt: number;
  finishedAt: number;
  /** JSON text of the decision or wait result, when there is one. */
  outcome: string | null;
  error: string | null;
}

export interface StreamRow {
  index: number;
  value: string;
  writtenAt: number;
}

export interface ListFlowsFilter {
  flowType?: string;
  status?: FlowStatus;
  /** Flow IDs after this one, in flow ID order. */
  afterFlowId?: string;
  limit: number;
}
