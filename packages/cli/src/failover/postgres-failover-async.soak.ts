/**
 * The asynchronous-replication failover (`npm run test:soak`): the standby
 * stops receiving 1.5 s before the primary dies, so the new primary lacks
 * the last commits. What must hold: a Worker never runs a single-attempt
 * write again as new when the store lost its commit (it records
 * `CommitLost`, an `outcome_unknown` call, and logs that the database lost
 * committed work); every session still finishes, with lost approvals given
 * again; the Workers notice the commit position fall (read along the
 * server's timeline, so new commits on the promoted server cannot hide it).
 * What it reports: lost approvals, lost commits, and refunds that ran twice
 * because the store also lost the claim (another Worker then takes the call
 * as new; see docs/postgres.md). Such a second run is always another
 * Worker's (the tool's invocation log records the process), and the Worker
 * that ran the first names the session, possibly after the sessions moved
 * on: the run waits up to 30 s for that.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runFailover } from "../test-fixtures/failover-run.ts";
import { replicatedPostgresSkip } from "../test-fixtures/replicated-postgres.ts";

const runs = Number(process.env.PERDURE_FAILOVER_RUNS ?? "3");

/** True when a Worker's error names session `id` as one whose work the store lost. */
function namedIn(output: string, id: string): boolean {
  return new RegExp(`(the store went back in time|the database lost committed work): session ${id} `).test(output);
}

for (let run = 1; run <= runs; run += 1) {
  void test(`asynchronous replication, run ${run}: every session finishes, no write runs twice in one Worker, and a Worker names every session whose write another Worker ran again`, { skip: replicatedPostgresSkip(), timeout: 300_000 }, async (t) => {
    // A Worker names a write it ran that the store lost when its check after the failover reaches it, which can be
    // after the sessions finished: the run waits (up to 30 s) for every write that ran twice to be named.
    const namesEveryDoubleRun = (output: string, refundRuns: ReadonlyMap<string, number>): boolean =>
      [...refundRuns].every(([id, count]) => count <= 1 || namedIn(output, id));
    const result = await runFailover({ synchronous: false, sessions: 20, lagMs: 1500, outputSettled: namesEveryDoubleRun, log: (line) => t.diagnostic(line) });
    const outcomes = [...result.statuses.values()];
    const twice = [...result.refundRuns].filter(([, count]) => count > 1).map(([id]) => id);
    const lostCommits = result.workerOutput.match(/the database lost committed work/g)?.length ?? 0;
    t.diagnostic(`recovery: first session ${result.firstMovedMs} ms, last ${result.allFinishedMs} ms after the promotion`);
    t.diagnostic(`outcomes ${JSON.stringify(Object.fromEntries([...new Set(outcomes)].map((status) => [status, outcomes.filter((each) => each === status).length])))}; approvals lost and given again: ${result.reapproved.length} ${JSON.stringify(result.reapproved)}; lost commits a Worker caught: ${lostCommits}; refunds that ran twice: ${twice.length} ${JSON.stringify(twice)}`);
    for (const [id, status] of result.statuses) assert.ok(status === "failed" || status === "outcome_unknown", `${id}'s refund ended ${status}`);
    // The commit position, read along the server's timeline, fell for a Worker that read it before the failover.
    assert.match(result.workerOutput, /the store went back in time: its commit position fell from \d+ to \d+/, "the Workers noticed the store lost commits");
    // A write that ran twice did so because the store forgot its claim and another Worker took it as new; never silently:
    // a Worker names the session in an error saying the store went back in time or lost committed work.
    for (const id of twice) assert.ok(namedIn(result.workerOutput, id), `${id} ran twice and no Worker reported its session`);
    // The Worker that ran a write never runs it again itself (the "while its Worker lives"): a second run is another Worker's.
    for (const [id, processes] of result.refundProcesses) assert.equal(new Set(processes).size, processes.length, `${id}'s refund ran twice in one Worker process (${processes.join(", ")})`);
  });
}
