/**
 * The SQLite store's prepared statements run as prepared. SQLite compiles a
 * statement again before a run when the plan it made read a bound value
 * (`LIMIT ?`, or `column = ?` in a statement with an ORDER BY), and that
 * compile cost more than the statement: the general claim's scan, about ten
 * calls an agent turn, spent some 35 of its 55 µs compiling, and about 42
 * statement runs an agent turn were compiled first. See `limitParameter` in
 * `sqlite-statements.ts`.
 *
 * A compile calls the connection's authorizer, once per table and column
 * the statement reads or writes: this file installs one on every connection
 * and counts its calls made while a statement runs, rather than while one
 * is prepared. Before the statements bound their limits and ordered
 * equalities through a CAST, the first test listed 24 of them.
 */
import assert from "node:assert/strict";
import { constants, DatabaseSync, StatementSync } from "node:sqlite";
import { test } from "node:test";
import { runMixedFlows } from "../testing/one-request-fixtures/mixed-flow.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import type { ExecutionRow } from "../store/store.ts";
import { sqliteSchema } from "./schema.ts";
import { findClaimableSql } from "./sqlite-statements.ts";

/** `DatabaseSync.setAuthorizer` is recent (not in older Node.js 22 releases); without it, the first test is skipped. */
const authorizes = typeof (DatabaseSync.prototype as Partial<DatabaseSync>).setAuthorizer === "function";

/** SQL of the statements compiled again while they ran, with how many times. */
const recompiled = new Map<string, number>();
let authorizations = 0;
const watched = new WeakSet<DatabaseSync>();

const databasePrototype = DatabaseSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const prepare = databasePrototype["prepare"]!;
databasePrototype["prepare"] = function watchedPrepare(this: DatabaseSync, ...args: unknown[]): unknown {
  if (authorizes && !watched.has(this)) {
    watched.add(this);
    this.setAuthorizer(() => {
      authorizations += 1;
      return constants.SQLITE_OK;
    });
  }
  return prepare.apply(this, args);
};
const statementPrototype = StatementSync.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
for (const method of ["run", "get", "all", "iterate"]) {
  const original = statementPrototype[method]!;
  statementPrototype[method] = function watchedRun(this: StatementSync, ...args: unknown[]): unknown {
    const before = authorizations;
    try {
      return original.apply(this, args);
    } finally {
      if (authorizations !== before) recompiled.set(this.sourceSQL, (recompiled.get(this.sourceSQL) ?? 0) + 1);
    }
  };
}

function recompiledSoFar(): string[] {
  return [...recompiled].map(([sql, times]) => `${times}× ${sql.replace(/\s+/g, " ").slice(0, 160)}`);
}

void test("no statement of the SQLite store is compiled again when it runs", { timeout: 120_000, skip: authorizes ? false : "this Node.js has no DatabaseSync.setAuthorizer" }, async (t) => {
  recompiled.clear();
  // Every kind of Step result, on the one-request path and on the general one (waits, publishes, locks, Timers, Streams trimmed by their budget).
  for (const general of [false, true]) {
    const temporary = createTemporarySqliteStore();
    t.after(() => temporary.dispose());
    if (general) temporary.store.oneRequest = undefined;
    await runMixedFlows(temporary.store, { waits: general });
  }
  // Each call of the general transaction twice, with other values the second time; most find nothing, which compiles them all the same.
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const queued: ExecutionRow = {
    flowId: "flow-1", executionId: "1", seq: 1, flowType: "Type", stepType: "Step", input: "{}", status: "ready", claimedBy: null, leaseToken: 0,
    leaseExpiresAt: null, deadlineAt: null, availableAt: 0, attempt: 0, executeClaims: 0, scheduledAt: 0, expiresAt: null, conditions: null,
    waitResult: null, checkpoint: null, movementOptions: null, recoveryError: null, lastError: null, createdAt: 0,
  };
  for (const round of [1, 2]) {
    const flowId = `flow-${round}`;
    const flowTypes = round === 1 ? ["Type"] : ["Type", "Other"];
    await temporary.store.transaction(async (transaction) => {
      await transaction.insertFlow({ flowId, flowType: "Type", status: "running", input: "{}", output: null, error: null, requestId: null, createdAt: 0, updatedAt: 0, nextSeq: 2 });
      await transaction.insertExecution({ ...queued, flowId });
      await transaction.lockFlow(flowId);
      await transaction.listFlows({ flowType: "Type", status: "running", afterFlowId: "", limit: 10 + round });
      await transaction.listFlows({ limit: round });
      await transaction.writeAttribute(flowId, "Plain", "", `"${round}"`);
      await transaction.writeAttribute(flowId, "Map", `key-${round}`, `"${round}"`);
      await transaction.readPlainAttributes(flowId);
      await transaction.readAttribute(flowId, "Map", `key-${round}`);
      await transaction.readAttributeRange(flowId, "Map", round === 1 ? {} : { fromKey: "a", toKey: "z", limit: 5 });
      await transaction.insertMessage(flowId, { seq: round, channel: "Inbox", key: "", messageId: `m-${round}`, value: "1", publishedAt: 0 });
      await transaction.listMessages(flowId, "Inbox", "", round === 1 ? undefined : 3);
      await transaction.deleteMessage(flowId, `m-${round}`);
      await transaction.getExecution(flowId, "1");
      await transaction.readLease?.(flowId, "1");
      await transaction.listExecutions(flowId);
      await transaction.listExecutions(flowId, round === 1 ? "ready" : "asking");
      await transaction.findClaimable(flowTypes, round, 4 + round);
      await transaction.countClaimable(flowTypes, round, 100 + round);
      await transaction.findLapsedLeases(flowTypes, round, 10 + round);
      await transaction.findClaimedBy(`worker-${round}`, 10 + round);
      await transaction.findExpiredQueued(flowTypes, round, 10 + round);
      await transaction.updateExecution(flowId, "1", { claimedBy: `worker-${round}`, leaseToken: round });
      await transaction.heldLocks(flowId, ["a", `b-${round}`]);
      await transaction.acquireLocks(flowId, [`lock-${round}`], "1");
      await transaction.releaseLocks(flowId, "1");
      await transaction.insertTimer({ flowId, flowType: "Type", executionId: "1", timerId: `t-${round}`, dueAt: round, fired: false });
      await transaction.listTimers(flowId, "1");
      await transaction.findTimersById(flowId, `t-${round}`);
      await transaction.findDueTimers(flowTypes, round, 60 + round);
      await transaction.markTimerFired(flowId, "1", `t-${round}`, round);
      await transaction.nextTimerDueAt(flowTypes);
      await transaction.deleteTimers(flowId, "1");
      await transaction.appendHistory({ flowId, seq: round, executionId: "1", stepType: "Step", method: "execute", status: "completed", attempt: 1, startedAt: 0, finishedAt: 0, outcome: null, error: null });
      await transaction.trimHistory(flowId, 10 + round);
      await transaction.listHistory(flowId, 10 + round);
      await transaction.appendStream(flowId, "Type", "Log", `"${round}"`, 0, 8);
      await transaction.appendStreams?.([{ flowId, flowType: "Type", stream: "Log", value: `"${round}"`, writtenAt: 0, capacityBytes: 8 }]);
      await transaction.readStream(flowId, "Log", round - 1, 10 + round);
      await transaction.recentStream(flowId, "Log", 10 + round);
      await transaction.touchWorker(`worker-${round}`, round);
      await transaction.removeWorker(`worker-${round}`);
      await transaction.updateFlow(flowId, { nextSeq: 3 });
      await transaction.deleteExecution(flowId, "1");
    });
  }
  assert.ok(authorizations > 0, "the authorizer saw the statements compiled");
  assert.deepEqual(recompiledSoFar(), []);
});

/** The plan SQLite makes for `sql`, one line per step. */
function planOf(database: DatabaseSync, sql: string): string[] {
  return (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail);
}

void test("the general claim's scan walks the queue index in claim order, for one Flow type or several", (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const database = new DatabaseSync(temporary.path);
  t.after(() => database.close());
  database.exec(sqliteSchema);
  for (const count of [1, 3]) {
    // The partial index holds only queued, unclaimed tasks, ordered by available_at: the scan reads no other row and sorts nothing.
    assert.deepEqual(planOf(database, findClaimableSql(count)), ["SEARCH executions USING INDEX executions_queued (available_at<?)"], `${count} Flow types`);
  }
});
