import { createHash } from "node:crypto";
import type { FlowRow } from "../../store/store.ts";
import { executionFieldColumns, executionFields, flowFieldColumns, flowFields } from "../../store/row-columns.ts";

export { executionFieldColumns, executionFields, flowFieldColumns, flowFields };

/*
 * Column lists of the PostgreSQL store's statements, named as the Store
 * contract's row fields, and prepared-statement names.
 */

/** Flow columns named as {@link FlowRow} fields, each behind `prefix` when given. */
export function flowColumnsOf(alias: string, prefix = ""): string {
  return Object.entries(flowFieldColumns).map(([field, column]) => `${alias}.${column} AS "${prefix}${field}"`).join(", ");
}

export const flowColumns = flowColumnsOf("flows");

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
