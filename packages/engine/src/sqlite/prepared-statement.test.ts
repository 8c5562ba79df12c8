/**
 * Rows of the SQLite store are ordinary objects that V8 keeps in fast mode,
 * one shape per statement, where `node:sqlite`'s own row objects are in
 * dictionary mode (see `prepared-statement.ts`). Checked with V8's own
 * predicates, on rows of the general claim read from a real SQLite file.
 * The first test failed on `%HasFastProperties` with `node:sqlite`'s rows,
 * and with rows built by adding their 23 fields one at a time.
 */
import assert from "node:assert/strict";
import { DatabaseSync, StatementSync } from "node:sqlite";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import type { ExecutionRow } from "../store/store.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";

setFlagsFromString("--allow-natives-syntax");
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- V8's natives syntax parses only in code compiled after the flag is set.
const hasFastProperties = new Function("value", "return %HasFastProperties(value)") as (value: object) => boolean;
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- as above.
const haveSameMap = new Function("left", "right", "return %HaveSameMap(left, right)") as (left: object, right: object) => boolean;

function queued(flowId: string, availableAt: number): ExecutionRow {
  return {
    flowId, executionId: "1", seq: 1, flowType: "Type", stepType: "Step", input: "{}", status: "ready", claimedBy: null, leaseToken: 0,
    leaseExpiresAt: null, deadlineAt: null, availableAt, attempt: 0, executeClaims: 0, scheduledAt: 0, expiresAt: null, conditions: null,
    waitResult: null, checkpoint: null, movementOptions: null, recoveryError: null, lastError: null, createdAt: 0,
  };
}

/** Without `StatementSync.setReturnArrays` (older Node.js 22 releases) the store keeps node:sqlite's rows. */
const arrays = typeof (StatementSync.prototype as Partial<StatementSync>).setReturnArrays === "function";

void test("the store's rows are plain objects in fast mode, one shape per statement, with the columns' values", { skip: arrays ? false : "this Node.js has no StatementSync.setReturnArrays" }, async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const rows = await temporary.store.transaction(async (transaction) => {
    await transaction.insertExecution(queued("flow-a", 1));
    await transaction.insertExecution(queued("flow-b", 2));
    return transaction.findClaimable(["Type"], 10, 5);
  });
  assert.deepEqual(rows, [queued("flow-a", 1), queued("flow-b", 2)]);
  const [first, second] = rows as [ExecutionRow, ExecutionRow];
  assert.equal(Object.getPrototypeOf(first), Object.prototype);
  assert.ok(hasFastProperties(first), "a row in dictionary mode makes every read of a field a hash lookup");
  assert.ok(haveSameMap(first, second), "rows of one statement share a shape");
});

void test("node:sqlite's own row objects are in dictionary mode, which is why the store builds its rows", (t) => {
  const database = new DatabaseSync(":memory:");
  t.after(() => database.close());
  const row = database.prepare("SELECT 1 AS a, 2 AS b").get()!;
  assert.equal(hasFastProperties(row), false);
});
