/**
 * The statements one SQLite transaction ran, in order, with what each gave
 * back, so the transaction can be run again on a fresh write lock and
 * checked: when every statement gives back the same as before, the work that
 * read those results would have decided the same, so its writes still hold.
 */
import type { SQLInputValue, SQLOutputValue } from "node:sqlite";
import type { PreparedStatement, Row } from "./prepared-statement.ts";

/** How a statement was run: `run` for its change count, `get` for one row, `all` for every row. */
export type StatementKind = "run" | "get" | "all";

/** What a statement gave back: its result, or the message of the error it threw. */
export type StatementOutcome = { value: number | Row | Row[] | undefined } | { error: string };

export interface LoggedStatement {
  kind: StatementKind;
  sql: string;
  parameters: readonly SQLInputValue[];
  /** Recorded when the transaction lets go of the write lock; undefined until then, or when it could not be recorded. */
  outcome: StatementOutcome | undefined;
}

/** Runs one statement. */
export function runStatement(statement: PreparedStatement, kind: StatementKind, parameters: readonly SQLInputValue[]): number | Row | Row[] | undefined {
  switch (kind) {
    case "run":
      return statement.run(...parameters);
    case "get":
      return statement.get(...parameters);
    case "all":
      return statement.all(...parameters);
  }
}

/** Runs one statement and captures what it gave back, error included. */
export function outcomeOf(statement: () => PreparedStatement, kind: StatementKind, parameters: readonly SQLInputValue[]): StatementOutcome {
  try {
    return { value: runStatement(statement(), kind, parameters) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function sameValue(left: SQLOutputValue | undefined, right: SQLOutputValue | undefined): boolean {
  if (left instanceof Uint8Array && right instanceof Uint8Array) return Buffer.from(left).equals(right);
  return left === right;
}

function sameRow(left: Row | undefined, right: Row | undefined): boolean {
  if (left === undefined || right === undefined) return left === right;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => sameValue(left[key], right[key]));
}

/** Whether two outcomes of the same statement are the same result (or the same error). */
export function sameOutcome(left: StatementOutcome, right: StatementOutcome): boolean {
  if ("error" in left || "error" in right) return "error" in left && "error" in right && left.error === right.error;
  const [first, second] = [left.value, right.value];
  if (typeof first === "number" || typeof second === "number") return first === second;
  if (Array.isArray(first) || Array.isArray(second)) {
    return Array.isArray(first) && Array.isArray(second) && first.length === second.length && first.every((row, index) => sameRow(row, second[index]));
  }
  return sameRow(first, second);
}

/** Whether the statement may change the database (a `SELECT` only reads). */
export function mayWrite(kind: StatementKind, sql: string): boolean {
  return kind === "run" || !/^\s*SELECT\b/i.test(sql);
}
