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

/**
 * Bound values SQLite's query planner must not read. SQLite compiles a
 * statement again before each run when the plan it made read a bound value:
 * a `LIMIT ?` (it plans for that limit), or a `column = ?` in a statement
 * that also orders its rows. The compile costs more than the run: the general
 * claim's scan took about 55 µs of CPU, some 35 µs of it compiling, on every
 * call. Inside a CAST the value is an expression the planner leaves alone, so
 * the prepared statement runs as it is, with the same plan.
 * `sqlite-statement-reuse.test.ts` checks that no statement of the store is
 * compiled again, and that the claim's plan still reads its index.
 */
export const limitParameter = "CAST(? AS INTEGER)";
/** A text value compared with `=` in a statement with an ORDER BY (see {@link limitParameter}). */
export const textParameter = "CAST(? AS TEXT)";

/** `build` remembered per count of Flow types (one per Worker), so a hot path builds no SQL text. */
export function perFlowTypeCount(build: (count: number) => string): (count: number) => string {
  const built = new Map<number, string>();
  return (count) => {
    let sql = built.get(count);
    if (sql === undefined) {
      sql = build(count);
      built.set(count, sql);
    }
    return sql;
  };
}

/**
 * The general claim's scan of `count` Flow types, oldest first: bind `now`,
 * the Flow types, `now` again and the limit. It walks `executions_queued`
 * from its oldest entry, so it visits only queued, unclaimed tasks.
 */
export const findClaimableSql = perFlowTypeCount((count) => `SELECT ${executionColumns} FROM executions
  WHERE claimed_by IS NULL AND status IN ('asking', 'ready') AND available_at <= ? AND flow_type IN (${placeholders(count)})
    AND (expires_at IS NULL OR expires_at > ?)
  ORDER BY available_at LIMIT ${limitParameter}`);

export const readFlowSql = `SELECT ${flowColumns} FROM flows WHERE flow_id = ?`;
export const listExecutionsSql = `SELECT ${executionColumns} FROM executions WHERE flow_id = ${textParameter} ORDER BY seq`;
export const deleteAttributeSql = "DELETE FROM attributes WHERE flow_id = ? AND name = ? AND key = ?";
export const upsertAttributeSql = "INSERT INTO attributes (flow_id, name, key, value) VALUES (?, ?, ?, ?) ON CONFLICT (flow_id, name, key) DO UPDATE SET value = excluded.value";
export const deleteExecutionSql = "DELETE FROM executions WHERE flow_id = ? AND execution_id = ?";
export const releaseLocksSql = "DELETE FROM locks WHERE flow_id = ? AND execution_id = ?";
/** Deletes a Flow's history entries older than its newest `keep`: bind the flow ID twice, then `keep`. */
export const trimHistorySql = `DELETE FROM history WHERE flow_id = ? AND seq <= (SELECT seq FROM history WHERE flow_id = ${textParameter} ORDER BY seq DESC LIMIT 1 OFFSET ${limitParameter})`;
