/**
 * Counts the statements and round trips the engine sends to its database, by
 * wrapping the drivers' prototypes in the benchmark process only: the stores'
 * hot paths carry no counters.
 *
 * - PostgreSQL (`pg`): every `client.query` is a statement; a statement sent
 *   while its connection has no answer outstanding starts a round trip (a
 *   pipelined statement sent while others are in flight rides along).
 * - SQLite (`node:sqlite`): every `run`/`get`/`all`/`iterate` of a prepared
 *   statement is a statement; `exec` calls (BEGIN, COMMIT, SAVEPOINT) are
 *   counted apart as transaction-control statements.
 */
import { DatabaseSync, StatementSync } from "node:sqlite";
import pg from "pg";

/** What the database was asked so far. */
export interface StatementCounts {
  statements: number;
  roundTrips: number;
  /** SQLite `exec` calls: BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE. */
  controlStatements: number;
}

const counts: StatementCounts = { statements: 0, roundTrips: 0, controlStatements: 0 };
let installed = false;

/** Wraps the drivers once per process; later calls do nothing. */
export function installStatementCounters(): void {
  if (installed) return;
  installed = true;
  const inFlight = new WeakMap<object, number>();
  const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  clientPrototype.query = function countedQuery(this: object, ...args: unknown[]): unknown {
    counts.statements += 1;
    const outstanding = inFlight.get(this) ?? 0;
    if (outstanding === 0) counts.roundTrips += 1;
    inFlight.set(this, outstanding + 1);
    const done = (): void => {
      inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
    };
    const last = args.at(-1);
    if (typeof last === "function") {
      args[args.length - 1] = (...callbackArgs: unknown[]) => {
        done();
        return (last as (...values: unknown[]) => unknown)(...callbackArgs);
      };
      return originalQuery.apply(this, args);
    }
    const result = originalQuery.apply(this, args);
    if (result instanceof Promise) void result.then(done, done);
    else done();
    return result;
  };
  for (const method of ["run", "get", "all", "iterate"] as const) {
    const prototype = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
    const original = prototype[method];
    if (original === undefined) continue;
    prototype[method] = function countedStatement(this: unknown, ...args: unknown[]): unknown {
      counts.statements += 1;
      return original.apply(this, args);
    };
  }
  const databasePrototype = DatabaseSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originalExec = databasePrototype["exec"];
  if (originalExec !== undefined) {
    databasePrototype["exec"] = function countedExec(this: unknown, ...args: unknown[]): unknown {
      counts.controlStatements += 1;
      return originalExec.apply(this, args);
    };
  }
}

/** A copy of the counts so far. */
export function readStatementCounts(): StatementCounts {
  return { ...counts };
}

/** `after - before`, field by field. */
export function countsBetween(before: StatementCounts, after: StatementCounts): StatementCounts {
  return {
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    controlStatements: after.controlStatements - before.controlStatements,
  };
}
