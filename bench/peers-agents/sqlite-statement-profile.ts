/**
 * Where SQLite's time goes in an agent turn: every prepared statement's
 * calls and time per turn, and the transaction-control `exec` calls (BEGIN,
 * COMMIT, SAVEPOINT) apart, at N concurrent sessions on the
 * process-crash-safe store (or `full`, the fourth argument). It wraps `node:sqlite`'s prototypes in this
 * process only (the store carries no counters).
 *
 *   npx tsc -b && node bench/peers-agents/sqlite-statement-profile.ts [sessions] [turns] [top] [process-crash-safe|full]
 *
 * Prints the `top` statements by total time: calls per turn, µs per call,
 * µs per turn, rows returned per call, and re-prepares per call, with the
 * first 100 characters of their SQL (the column lists cut). Times are the
 * process's CPU time (`process.cpuUsage`, exact to the microsecond on Linux,
 * where the thread's own reading only moves by scheduler ticks; it also
 * counts the wrapper's two readings, about 1–2 µs), so other processes on a
 * busy machine do not inflate them. With PERDURE_BENCH_COUNT_REPREPARES=1 it also
 * counts re-prepares (its authorizer, a call into JavaScript per table and
 * column, makes each re-prepare dearer, so time without it). A re-prepare
 * is SQLite compiling the statement again before it runs, which it does
 * when the plan it chose depended on a bound value (`LIMIT ?`, or
 * `column = ?` next to an `ORDER BY`): the authorizer, which SQLite calls
 * while it compiles, is counted while a statement runs.
 */
import { constants, DatabaseSync, StatementSync } from "node:sqlite";
import { openPerdureAgentSqlite } from "./perdure-agent.ts";
import { measureSessionsThroughput } from "./turn-workload.ts";

const [sessionsText = "16", turnsText = "10", topText = "15", durabilityText = "process-crash-safe"] = process.argv.slice(2);
if (durabilityText !== "process-crash-safe" && durabilityText !== "full") throw new Error(`unknown durability ${durabilityText}: use process-crash-safe or full`);
const sessions = Number(sessionsText);
const turns = Number(turnsText);
const top = Number(topText);

interface Tally { calls: number; ms: number; rows: number; reprepares: number }
const tallies = new Map<string, Tally>();
let measuring = false;

function tally(key: string, ms: number, rows: number, reprepares: number): void {
  if (!measuring) return;
  let entry = tallies.get(key);
  if (entry === undefined) {
    entry = { calls: 0, ms: 0, rows: 0, reprepares: 0 };
    tallies.set(key, entry);
  }
  entry.calls += 1;
  entry.ms += ms;
  entry.rows += rows;
  entry.reprepares += reprepares;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Authorizer calls while a statement runs: SQLite compiles it again (one call per table and column it reads or writes). */
let authorizations = 0;
const authorized = new WeakSet<DatabaseSync>();
const countReprepares = process.env["PERDURE_BENCH_COUNT_REPREPARES"] === "1";
const databasePrototype = DatabaseSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const originalPrepare = databasePrototype["prepare"]!;
databasePrototype["prepare"] = function countingPrepare(this: DatabaseSync, ...args: unknown[]): unknown {
  if (countReprepares && !authorized.has(this)) {
    authorized.add(this);
    this.setAuthorizer(() => {
      authorizations += 1;
      return constants.SQLITE_OK;
    });
  }
  return originalPrepare.apply(this, args);
};

const statementPrototype = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ["run", "get", "all"] as const) {
  const original = statementPrototype[method]!;
  statementPrototype[method] = function timedStatement(this: StatementSync, ...args: unknown[]): unknown {
    const authorizedBefore = authorizations;
    const started = cpuMs();
    const result = original.apply(this, args);
    const ms = cpuMs() - started;
    const rows = Array.isArray(result) ? result.length : method === "get" ? (result === undefined ? 0 : 1) : 0;
    tally(`${method} ${this.sourceSQL}`, ms, rows, authorizations === authorizedBefore ? 0 : 1);
    return result;
  };
}
const originalExec = databasePrototype["exec"]!;
databasePrototype["exec"] = function timedExec(this: DatabaseSync, sql: unknown): unknown {
  const started = cpuMs();
  const result = originalExec.call(this, sql);
  tally(`exec ${String(sql)}`, cpuMs() - started, 0, 0);
  return result;
};

function shortSql(key: string): string {
  return key.replace(/\s+/g, " ").replace(/SELECT .*? FROM/, (match) => (match.length > 60 ? "SELECT <columns> FROM" : match)).slice(0, 100);
}

const system = await openPerdureAgentSqlite(durabilityText, 16);
try {
  await measureSessionsThroughput(system, 4, 5);
  measuring = true;
  const rate = await measureSessionsThroughput(system, sessions, turns);
  measuring = false;
  const count = sessions * turns;
  const rows = [...tallies.entries()].sort((left, right) => right[1].ms - left[1].ms);
  const totalMs = rows.reduce((sum, [, entry]) => sum + entry.ms, 0);
  console.log(`${system.name}: ${rate.toFixed(1)} turns/s at ${sessions} sessions, ${count} turns; SQLite calls ${(totalMs * 1000 / count).toFixed(0)} µs CPU per turn`);
  const reprepared = rows.reduce((sum, [, entry]) => sum + entry.reprepares, 0);
  if (countReprepares) console.log(`re-prepares per turn: ${(reprepared / count).toFixed(1)}`);
  console.log("calls/turn  µs/call  µs/turn  rows/call  reprep/call  statement");
  for (const [key, entry] of rows.slice(0, top)) {
    console.log(`${(entry.calls / count).toFixed(2).padStart(10)}  ${(entry.ms * 1000 / entry.calls).toFixed(1).padStart(7)}  ${(entry.ms * 1000 / count).toFixed(0).padStart(7)}  ${(entry.rows / entry.calls).toFixed(2).padStart(9)}  ${(entry.reprepares / entry.calls).toFixed(2).padStart(11)}  ${shortSql(key)}`);
  }
} finally {
  await system.close();
}
