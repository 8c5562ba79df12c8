import { createHash } from "node:crypto";
import type { ExecutionRow, FlowRow } from "../store/store.ts";

/*
 * Column lists of the PostgreSQL store's statements, named as the Store
 * contract's row fields, and prepared-statement names.
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

/** Flow columns named as {@link FlowRow} fields, each behind `prefix` when given. */
export function flowColumnsOf(alias: string, prefix = ""): string {
  return Object.entries(flowFieldColumns).map(([field, column]) => `${alias}.${column} AS "${prefix}${field}"`).join(", ");
}

export const flowColumns = flowColumnsOf("flows");

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

export const executionFields = Object.keys(executionFieldColumns) as (keyof ExecutionRow)[];

export function executionColumns(alias: string): string {
  return executionFields.map((field) => `${alias}.${executionFieldColumns[field]} AS "${field}"`).join(", ");
}

export const timerColumns = (alias: string): string =>
  `${alias}.flow_id AS "flowId", ${alias}.flow_type AS "flowType", ${alias}.execution_id AS "executionId", ${alias}.timer_id AS "timerId", ${alias}.due_at AS "dueAt", ${alias}.fired`;

export type FlowFields = Partial<Pick<FlowRow, "status" | "output" | "error" | "updatedAt" | "nextSeq">>;

const statementNames = new Map<string, string>();

/** A stable prepared-statement name per SQL text, so each connection parses a statement once. */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `perdure_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}
