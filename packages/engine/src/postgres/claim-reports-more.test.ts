/**
 * Migration 0019: `perdure_claim_plain` tells whether claimable tasks were
 * left (`claimedAll`), and a Worker whose commit claimed every task there
 * was wakes no Worker, where it woke its own loop and every other process
 * (a NOTIFY) to look for more and find nothing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkClaimedAllAnswers, tasksWakesAfterFan } from "../testing/one-request-fixtures/claimed-all.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

void test("a claim says whether claimable tasks were left beyond those it took", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
  await checkClaimedAllAnswers(store);
});

void test("a commit that claims every task it queued wakes no Worker", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
  // Fan's commit claimed both tasks it queued, its whole limit, and the store said none was left: no wake-up since.
  const wakes = await tasksWakesAfterFan(store, "ClaimMoreFan");
  assert.deepEqual(wakes, [], JSON.stringify(wakes));
});
