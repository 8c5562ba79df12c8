/**
 * A PostgreSQL failover with synchronous replication, from outside: two
 * `perdure worker` processes behind a TCP proxy, sessions whose approved
 * refunds (single-attempt writes) run while the primary is killed and the
 * standby promoted. Nothing acknowledged is lost, no refund runs twice,
 * every session finishes; the recovery time is reported. The asynchronous
 * variant is `postgres-failover-async.soak.ts` (`npm run test:soak`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runFailover } from "../test-fixtures/failover-run.ts";
import { replicatedPostgresSkip } from "../test-fixtures/replicated-postgres.ts";

void test("synchronous replication: after the primary dies mid-load and the standby is promoted, every session finishes, no approval is lost and no single-attempt write runs twice", { skip: replicatedPostgresSkip(), timeout: 300_000 }, async (t) => {
  const result = await runFailover({ synchronous: true, sessions: 12, log: (line) => t.diagnostic(line) });
  t.diagnostic(`recovery: the first session finished ${result.firstMovedMs} ms after the promotion, the last ${result.allFinishedMs} ms after`);
  const outcomes = [...result.statuses.values()];
  t.diagnostic(`refund outcomes: ${JSON.stringify(Object.fromEntries([...new Set(outcomes)].map((status) => [status, outcomes.filter((each) => each === status).length])))}`);
  assert.deepEqual(result.reapproved, [], "no session showed its approval pending again: none was lost");
  for (const [id, runs] of result.refundRuns) {
    assert.ok(runs <= 1, `${id}'s refund ran ${runs} times`);
    const status = result.statuses.get(id);
    // The tool refuses the made-up order, so a refund that ran is `failed`; one cut off by the failover is `outcome_unknown`.
    assert.ok(status === "failed" || status === "outcome_unknown", `${id}'s refund ended ${status}`);
    if (status === "failed") assert.equal(runs, 1, `${id}'s refund is recorded as run, so it ran once`);
  }
  assert.ok(!/the database lost committed work|the store went back in time/.test(result.workerOutput), "with synchronous replication the new primary has every commit, and no Worker says otherwise");
});
