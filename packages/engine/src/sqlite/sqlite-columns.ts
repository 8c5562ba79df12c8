/**
 * SQL fragments for the SQLite store's rows, named as the Store contract's
 * fields (SQLite keeps an alias's case), shared by its transactions and its
 * one-request operations.
 */
import { executionFieldColumns, executionFields, flowFieldColumns, flowFields } from "../store/row-columns.ts";

/** A Flow row's columns, each as its field. */
export const flowColumns = flowFields.map((field) => `${flowFieldColumns[field]} AS ${field}`).join(", ");

/** An execution row's columns, each as its field. */
export const executionColumns = executionFields.map((field) => `${executionFieldColumns[field]} AS ${field}`).join(", ");

/** Inserts an execution row; bind its fields in {@link executionFields} order. */
export const executionInsertSql = `INSERT INTO executions (${executionFields.map((field) => executionFieldColumns[field]).join(", ")})
  VALUES (${executionFields.map(() => "?").join(", ")})`;
