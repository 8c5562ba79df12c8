/**
 * On SQLite too, a claim tells whether it took every claimable task there
 * was (`claimedAll`), on the one-request path and on the general one, and a
 * commit whose claim took every task it queued wakes no Worker. Without it,
 * a commit that claimed its whole limit woke the loop, whose claim found
 * nothing: about five empty claims a turn once a Step's last Stream messages
 * went in its commit (it had been a Stream transaction's time later).
 * docs/decisions/2026-12-07-claims-tell-what-is-left.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkClaimedAllAnswers, tasksWakesAfterFan } from "../testing/one-request-fixtures/claimed-all.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";

void test("SQLite: a one-request claim says whether claimable tasks were left beyond those it took", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  await checkClaimedAllAnswers(temporary.store);
});

void test("SQLite: a commit that claims every task it queued wakes no Worker, on the one-request path and on the general one", async (t) => {
  for (const general of [false, true]) {
    const temporary = createTemporarySqliteStore();
    t.after(() => temporary.dispose());
    const wakes = await tasksWakesAfterFan(temporary.store, general ? "SqliteFanGeneral" : "SqliteFanOneRequest", general);
    assert.deepEqual(wakes, [], `${general ? "general" : "one-request"} path: ${JSON.stringify(wakes)}`);
  }
});
