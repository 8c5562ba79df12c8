/**
 * Thrown by a SQLite store transaction that had to be run again too many
 * times: each time it waited on something other than the store (an RPC
 * handler awaiting I/O), another transaction changed what it had read.
 */
export class SqliteTransactionConflict extends Error {
  override readonly name = "SqliteTransactionConflict";
}
