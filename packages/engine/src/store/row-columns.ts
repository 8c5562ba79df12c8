import type { ExecutionRow, FlowRow } from "./store.ts";

/*
 * The column names of the engine's tables, by the Store contract's row
 * fields. Both stores use the same names, so they share this mapping.
 */

export const flowFieldColumns: Record<keyof FlowRow, string> = {
  flowId: "flow_id",
  flowType: "flow_type",
  status: "status",
  input: "input",
  output: "output",
  error: "error",
  requestId: "request_id",
  createdAt: "created_at",
  updatedAt: "updated_at",
  nextSeq: "next_seq",
};

export const executionFieldColumns: Record<keyof ExecutionRow, string> = {
  flowId: "flow_id",
  executionId: "execution_id",
  seq: "seq",
  flowType: "flow_type",
  stepType: "step_type",
  input: "input",
  status: "status",
  claimedBy: "claimed_by",
  leaseToken: "lease_token",
  leaseExpiresAt: "lease_expires_at",
  deadlineAt: "deadline_at",
  availableAt: "available_at",
  attempt: "attempt",
  executeClaims: "execute_claims",
  scheduledAt: "scheduled_at",
  expiresAt: "expires_at",
  conditions: "conditions",
  waitResult: "wait_result",
  checkpoint: "checkpoint",
  movementOptions: "movement_options",
  recoveryError: "recovery_error",
  lastError: "last_error",
  createdAt: "created_at",
};

export const flowFields = Object.keys(flowFieldColumns) as (keyof FlowRow)[];
export const executionFields = Object.keys(executionFieldColumns) as (keyof ExecutionRow)[];
