/**
 * SQL the SQLite store's transactions and its one-request operations both
 * run: column lists named as the Store contract's fields (SQLite keeps an
 * alias's case), and the statements they have in common. One text per
 * statement also means one prepared statement in the connection's cache.
 */
import { executionFieldColumns, executionFields, flowFieldColumns, flowFields } from "../store/row-columns.ts";

/** A Flow row's columns, each as its field. */
export const flowColumns = flowFields.map((field) => `${flowFieldColumns[field]} AS ${field}`).join(", ");

/** An execution row's columns, each as its field. */
export const executionColumns = executionFields.map((field) => `${executionFieldColumns[field]} AS ${field}`).join(", ");

/** Inserts an execution row; bind its fields in {@link executionFields} order. */
export const executionInsertSql = `INSERT INTO executions (${executionFields.map((field) => executionFieldColumns[field]).join(", ")})
  VALUES (${executionFields.map(() => "?").join(", ")})`;

/** `count` bind placeholders, comma-separated. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

export const readFlowSql = `SELECT ${flowColumns} FROM flows WHERE flow_id = ?`;
export const listExecutionsSql = `SELECT ${executionColumns} FROM executions WHERE flow_id = ? ORDER BY seq`;
export const deleteAttributeSql = "DELETE FROM attributes WHERE flow_id = ? AND name = ? AND key = ?";
export const upsertAttributeSql = "INSERT INTO attributes (flow_id, name, key, value) VALUES (?, ?, ?, ?) ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value";
export const deleteExecutionSql = "DELETE FROM executions WHERE flow_id = ? AND execution_id = ?";
export const releaseLocksSql = "DELETE FROM locks WHERE flow_id = ? AND execution_id = ?";
/** Deletes a Flow's history entries older than its newest `keep`: bind the flow ID twice, then `keep`. */
export const trimHistorySql = "DELETE FROM history WHERE flow_id = ? AND seq <= (SELECT seq FROM history WHERE flow_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)";
