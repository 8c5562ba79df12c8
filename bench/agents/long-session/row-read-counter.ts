/**
 * Counts the rows the SQLite store reads, by wrapping `StatementSync`'s
 * `get` and `all` in the benchmark process only (the store's hot path
 * carries no counter). Rows of the `attributes` table, the session's Flow
 * state, are counted apart, with the bytes of their `value` column: that is
 * what a Step's load costs and what must not grow with the session.
 */
import { StatementSync } from "node:sqlite";

/** Rows read so far. */
export interface RowReadCounts {
  /** Rows every `get`/`all` returned, from any table. */
  rows: number;
  /** Rows read from `attributes` (plain Attributes and AttributeMap instances). */
  attributeRows: number;
  /** Characters of the `value` column of those rows (JSON text; ASCII here, so bytes). */
  attributeValueBytes: number;
  /** Statements that read (`get`/`all` calls). */
  readStatements: number;
}

const counts: RowReadCounts = { rows: 0, attributeRows: 0, attributeValueBytes: 0, readStatements: 0 };
let installed = false;
let paused = 0;

function countRows(statement: StatementSync, rows: readonly unknown[]): void {
  if (paused > 0) return;
  counts.readStatements += 1;
  counts.rows += rows.length;
  if (!/\bFROM attributes\b/.test(statement.sourceSQL)) return;
  counts.attributeRows += rows.length;
  for (const row of rows) {
    const value = (row as { value?: unknown } | undefined)?.value;
    if (typeof value === "string") counts.attributeValueBytes += value.length;
  }
}

/** Wraps `StatementSync.prototype.get` and `.all` once per process; later calls do nothing. */
export function installRowReadCounter(): void {
  if (installed) return;
  installed = true;
  const prototype = StatementSync.prototype as unknown as {
    get: (...parameters: unknown[]) => unknown;
    all: (...parameters: unknown[]) => unknown[];
  };
  const originalGet = prototype.get;
  const originalAll = prototype.all;
  prototype.get = function countedGet(this: StatementSync, ...parameters: unknown[]): unknown {
    const row = originalGet.apply(this, parameters);
    countRows(this, row === undefined ? [] : [row]);
    return row;
  };
  prototype.all = function countedAll(this: StatementSync, ...parameters: unknown[]): unknown[] {
    const rows = originalAll.apply(this, parameters);
    countRows(this, rows);
    return rows;
  };
}

/** A copy of the counts so far. */
export function readRowReadCounts(): RowReadCounts {
  return { ...counts };
}

/** `after - before`, field by field. */
export function rowReadsBetween(before: RowReadCounts, after: RowReadCounts): RowReadCounts {
  return {
    rows: after.rows - before.rows,
    attributeRows: after.attributeRows - before.attributeRows,
    attributeValueBytes: after.attributeValueBytes - before.attributeValueBytes,
    readStatements: after.readStatements - before.readStatements,
  };
}

/** Runs `work` without counting its reads (the benchmark's own measuring queries). */
export function withoutRowCounting<TResult>(work: () => TResult): TResult {
  paused += 1;
  try {
    return work();
  } finally {
    paused -= 1;
  }
}
