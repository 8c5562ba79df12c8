/**
 * A prepared statement of the SQLite store whose rows are ordinary objects.
 *
 * `node:sqlite` builds each row object in C++ one property at a time on a
 * null prototype, and V8 keeps such objects in dictionary mode: every later
 * read of a field is a hash lookup, and a spread (`{ ...row }`) copies it
 * slowly. The engine reads and copies the rows it gets (a claimed execution
 * is spread into its lease, its Flow read field by field), so on five claim
 * candidates that cost about 30 µs more than the statement itself. Here the
 * statement returns each row as an array, which `node:sqlite` also builds
 * faster, and JavaScript makes the object: the same fields, in the same
 * order, with one shape for every row of the statement.
 *
 * Each row is a copy of a template object with the statement's fields, its
 * values then set in place. Adding the fields one at a time would not do:
 * past about 20 fields added by computed name, V8 turns the object into a
 * dictionary too (an execution row has 23). `JSON.parse` builds the
 * template in fast mode whatever its size, and a spread of a fast object
 * keeps its shape.
 *
 * On a Node.js without `setReturnArrays` or `columns()` (older releases of
 * Node.js 22, which the engine still runs on) the statement gives
 * `node:sqlite`'s own row objects as they are.
 */
import type { SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite";

/** A row as the store's code reads it: one field per result column, named as the column. */
export type Row = Record<string, SQLOutputValue>;

export class PreparedStatement {
  private readonly statement: StatementSync;
  /** The result columns' names, in order; empty for a statement that returns no rows. */
  private readonly names: readonly string[];
  /** An object with one field per result column, each null, in fast mode. */
  private readonly template: Row;
  /** Whether the statement returns arrays, which `row` makes objects of. */
  private readonly arrays: boolean;

  constructor(statement: StatementSync) {
    this.statement = statement;
    const optional = statement as Partial<Pick<StatementSync, "columns" | "setReturnArrays">>;
    this.arrays = typeof optional.columns === "function" && typeof optional.setReturnArrays === "function";
    this.names = this.arrays ? statement.columns().map((column) => column.name) : [];
    this.template = JSON.parse(JSON.stringify(Object.fromEntries(this.names.map((name) => [name, null])))) as Row;
    if (this.arrays) statement.setReturnArrays(true);
  }

  get sql(): string {
    return this.statement.sourceSQL;
  }

  /** Runs the statement; returns how many rows it changed. */
  run(...parameters: SQLInputValue[]): number {
    return Number(this.statement.run(...parameters).changes);
  }

  /** The first row, or undefined when there is none. */
  get(...parameters: SQLInputValue[]): Row | undefined {
    if (!this.arrays) return this.statement.get(...parameters);
    const values = this.statement.get(...parameters) as unknown as SQLOutputValue[] | undefined;
    return values === undefined ? undefined : this.row(values);
  }

  /** Every row. */
  all(...parameters: SQLInputValue[]): Row[] {
    if (!this.arrays) return this.statement.all(...parameters);
    const rows = this.statement.all(...parameters) as unknown as SQLOutputValue[][];
    const objects = new Array<Row>(rows.length);
    for (let index = 0; index < rows.length; index += 1) objects[index] = this.row(rows[index]!);
    return objects;
  }

  private row(values: readonly SQLOutputValue[]): Row {
    const row: Row = { ...this.template };
    const names = this.names;
    for (let index = 0; index < names.length; index += 1) row[names[index]!] = values[index]!;
    return row;
  }
}
