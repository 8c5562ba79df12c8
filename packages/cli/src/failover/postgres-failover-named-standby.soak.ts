/**
 * The asynchronous-replication failover with the setup docs/postgres.md
 * recommends (`npm run test:soak`): the standby is in
 * `synchronous_standby_names`, but the default `synchronous_commit` is
 * `local`, so ordinary commits do not wait for it. Only the commit that
 * confirms a single-attempt Step's claim before it starts raises it
 * (`PostgresStore` option `singleAttemptClaimCommit`, default `on`). The
 * standby stops receiving, sessions are approved (acknowledged by the
 * primary alone), their refunds are claimed and wait, unstarted, for the
 * standby; the primary dies and the standby is promoted. What must hold:
 * no refund runs twice, counted outside the store (the tool's own log of
 * invocations), across both Workers; every session finishes. What it shows
 * is still lost: the acknowledged approvals (the session asks for them
 * again), because ordinary commits stayed asynchronous.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runFailover } from "../test-fixtures/failover-run.ts";
import { replicatedPostgresSkip } from "../test-fixtures/replicated-postgres.ts";

const runs = Number(process.env.PERDURE_FAILOVER_RUNS ?? "2");
const approvedDuringLag = 4;

for (let run = 1; run <= runs; run += 1) {
  void test(`standby named synchronous, commits local, run ${run}: no single-attempt write runs twice across Workers, while acknowledged approvals are still lost`, { skip: replicatedPostgresSkip(), timeout: 300_000 }, async (t) => {
    const result = await runFailover({ synchronous: false, namedStandby: true, sessions: 20, lagMs: 1500, approveDuringLag: approvedDuringLag, log: (line) => t.diagnostic(line) });
    const outcomes = [...result.statuses.values()];
    const notStarted = result.workerOutput.match(/did not start CallSingleAttemptTool/g)?.length ?? 0;
    const lostCommits = result.workerOutput.match(/the database lost committed work/g)?.length ?? 0;
    t.diagnostic(`recovery: first session ${result.firstMovedMs} ms, last ${result.allFinishedMs} ms after the promotion`);
    t.diagnostic(`outcomes ${JSON.stringify(Object.fromEntries([...new Set(outcomes)].map((status) => [status, outcomes.filter((each) => each === status).length])))}; `
      + `refund runs ${JSON.stringify(Object.fromEntries([...new Set(result.refundRuns.values())].map((count) => [count, [...result.refundRuns.values()].filter((each) => each === count).length])))}; `
      + `transactions waiting for the standby when the primary died: ${result.standbyWaitsAtDeath}; claims found lost and not started: ${notStarted}; `
      + `approvals lost and given again: ${result.reapproved.length} ${JSON.stringify(result.reapproved)}; lost commits a Worker caught: ${lostCommits}`);

    // The single-attempt confirmations waited for the standby, which never got them.
    assert.ok(result.standbyWaitsAtDeath >= approvedDuringLag, `${result.standbyWaitsAtDeath} transactions waited for the standby when the primary died`);
    for (const [id, count] of result.refundRuns) {
      assert.ok(count <= 1, `${id}'s refund ran ${count} times`);
      const status = result.statuses.get(id);
      assert.ok(status === "failed" || status === "outcome_unknown", `${id}'s refund ended ${status}`);
      if (status === "failed") assert.equal(count, 1, `${id}'s refund is recorded as run, so it ran once`);
    }
    // No Worker statement waited out its lock timeout behind a confirmation waiting for the standby (its liveness writes would stall behind it).
    assert.doesNotMatch(result.workerOutput, /lock timeout/, "a Worker statement waited for a lock until it timed out");
    // Their claims were gone on the new primary: the Workers dropped them unstarted and said so.
    assert.ok(notStarted >= 1, "a Worker reported a single-attempt claim the new primary lacked, not started");
    // Ordinary commits stayed asynchronous: the approvals acknowledged while the standby received nothing are lost.
    for (const id of result.approvedDuringLag) assert.ok(result.reapproved.includes(id), `${id}'s approval, acknowledged during the cut, was not lost: ordinary commits waited for the standby`);
  });
}
