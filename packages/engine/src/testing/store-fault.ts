/** The storage faults a `FaultInjectingStore` injects, as the errors real drivers throw. */
import type { StoreTransaction } from "../store/store.ts";

/**
 * A storage fault:
 * - `busy`: the database is locked (SQLite `SQLITE_BUSY`; PostgreSQL lock timeout, 55P03).
 * - `io-error`: the disk failed a read or write (SQLite `SQLITE_IOERR`; PostgreSQL 58030).
 * - `disk-full`: no space left (SQLite `SQLITE_FULL`; PostgreSQL 53100).
 * - `connection-reset`: the connection dropped (`ECONNRESET`, as `pg` throws).
 * - `commit-outcome-unknown`: the transaction commits, then the caller gets an
 *   error as if the reply were lost (a dropped connection on PostgreSQL, an
 *   I/O error at COMMIT on SQLite).
 */
export type StoreFaultKind = "busy" | "io-error" | "disk-full" | "connection-reset" | "commit-outcome-unknown";

/** Every fault kind, in a stable order. */
export const storeFaultKinds: readonly StoreFaultKind[] = ["busy", "io-error", "disk-full", "connection-reset", "commit-outcome-unknown"];

/** One StoreTransaction method call, as a fault chooser sees it. */
export interface StoreCall {
  method: keyof StoreTransaction;
  args: readonly unknown[];
}

/** Where in a transaction a fault may strike. */
export interface StoreFaultPoint {
  /** Number of the `transaction` call on this store, from 0. */
  transaction: number;
  /**
   * `begin`: before the transaction starts (its work never runs);
   * `method`: instead of one StoreTransaction call;
   * `commit`: after the work resolved, at COMMIT.
   */
  stage: "begin" | "method" | "commit";
  /** The method about to run, at stage `method`. */
  method: keyof StoreTransaction | undefined;
  /** The calls this transaction made so far, in order, with their arguments. */
  calls: readonly StoreCall[];
}

const injectedErrors = new WeakMap<object, StoreFaultKind>();

/**
 * The fault kind of an error a `FaultInjectingStore` injected, or undefined
 * for any other error (a real one, or a handler's).
 *
 * @example
 * if (injectedFaultOf(error) === "commit-outcome-unknown") expectCommitted.push(key);
 */
export function injectedFaultOf(error: unknown): StoreFaultKind | undefined {
  return typeof error === "object" && error !== null ? injectedErrors.get(error) : undefined;
}

function driverError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

/** node:sqlite reports every SQLite failure with code ERR_SQLITE_ERROR and the SQLite result code in `errcode`. */
function sqliteError(errstr: string, errcode: number): Error {
  return driverError(errstr, { code: "ERR_SQLITE_ERROR", errcode, errstr });
}

function postgresError(message: string, code: string): Error {
  return driverError(message, { code, severity: "ERROR" });
}

function connectionReset(): Error {
  return driverError("read ECONNRESET", { code: "ECONNRESET", errno: -104, syscall: "read" });
}

/**
 * A new error shaped like the one the store's driver throws for `kind`:
 * node:sqlite's for a store of kind `sqlite`, pg's for any other.
 */
export function storeFaultError(kind: StoreFaultKind, storeKind: string): Error {
  const sqlite = storeKind === "sqlite";
  const error = ((): Error => {
    switch (kind) {
      case "busy":
        return sqlite ? sqliteError("database is locked", 5) : postgresError("canceling statement due to lock timeout", "55P03");
      case "io-error":
        return sqlite ? sqliteError("disk I/O error", 10) : postgresError('could not write to file "pg_wal/xlogtemp.71": Input/output error', "58030");
      case "disk-full":
        return sqlite ? sqliteError("database or disk is full", 13) : postgresError('could not extend file "base/16384/16402": No space left on device', "53100");
      case "connection-reset":
        return connectionReset();
      case "commit-outcome-unknown":
        return sqlite ? sqliteError("disk I/O error", 10) : driverError("Connection terminated unexpectedly", {});
    }
  })();
  injectedErrors.set(error, kind);
  return error;
}
