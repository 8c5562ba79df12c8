/**
 * What an idle Worker's polls read must not grow with the number of
 * waiting Flows (issue 40: rows read at idle rose from 774/s at 100 to
 * 33,897/s at 10,000 sessions waiting for approvals). The polls (lapsed
 * leases, expired queued tasks, claimable tasks, due Timers) run in one
 * transaction, and the table statistics of that transaction
 * (`pg_stat_xact_user_tables`) count the rows they read, at two sizes.
 *
 * The planner's statistics are made stale the way a burst of work leaves
 * them: analyzed while every execution was claimed. A query that relies on
 * the statistics to prefer the claimed-executions index then scans the
 * whole table.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { channel } from "../channel/channel.ts";
import { Client } from "../client/client.ts";
import { anyOf, received, timer } from "../condition/condition.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StoreTransaction } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const approvals = channel<string>("Approvals");
const AwaitApproval = defineStep("AwaitApproval", {
  // An approval, or its expiry a day later: each waiting Flow has a pending Timer too.
  waitUntil: () => anyOf(received(approvals), timer("expiry", { afterMs: 86_400_000 })),
  execute: () => completeFlow(),
});
const waitingFlow = defineFlow({ type: "IdleWaiting", start: "AwaitApproval", steps: [AwaitApproval], persistence: { approvals } });

interface IdleReads {
  rowsRead: number;
  scans: string;
}

/** Starts `count` Flows that wait for a message, lets them all wait, makes the statistics stale, and counts what the polls read. */
async function idleReadsWith(count: number): Promise<IdleReads> {
  const url = requireTestDatabaseUrl();
  const schema = createTemporaryPostgresSchema(url);
  try {
    const store = await schema.open({ poolSize: 4 });
    const worker = new Worker({ store, flows: [waitingFlow], concurrency: 16 });
    await worker.start();
    const client = new Client({ store });
    for (let start = 0; start < count; start += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - start) }, (_, index) => client.start(waitingFlow, `waiting-${start + index}`)));
    }
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const table = (name: string): string => `${pg.escapeIdentifier(schema.schema)}.${name}`;
    try {
      await pollUntil(async () => {
        const result = await admin.query<{ waiting: string }>(`SELECT count(*) AS waiting FROM ${table("executions")} WHERE status = 'waiting' AND claimed_by IS NULL`);
        return Number(result.rows[0]?.waiting) === count;
      }, { timeoutMs: 120_000, description: `${count} Flows to wait` });
      await worker.close();
      // Statistics analyzed in the middle of a burst, when every execution was claimed.
      await admin.query("BEGIN");
      await admin.query(`UPDATE ${table("executions")} SET claimed_by = 'a-worker-of-the-burst'`);
      await admin.query(`ANALYZE ${table("executions")}`);
      await admin.query(`UPDATE ${table("executions")} SET claimed_by = NULL`);
      await admin.query("COMMIT");
    } finally {
      await admin.end();
    }
    const flowTypes = [waitingFlow.flowType];
    // A fresh connection: its counts are this transaction's reads (and the store's open, which reads none of these tables).
    const polling = await schema.open({ poolSize: 1 });
    return await polling.transaction(async (transaction: StoreTransaction) => {
      const now = polling.clock.now();
      await transaction.findLapsedLeases(flowTypes, now, 64);
      await transaction.findExpiredQueued(flowTypes, now, 64);
      await transaction.findClaimable(flowTypes, now, 8);
      await transaction.findDueTimers(flowTypes, now, 64);
      await transaction.nextTimerDueAt(flowTypes);
      // The same backend's counts for this transaction, before it ends.
      const rows = (transaction as unknown as { rows(text: string, values: unknown[]): Promise<Record<string, string>[]> }).rows.bind(transaction);
      const counts = await rows(
        `SELECT relname, seq_scan, seq_tup_read, idx_scan, idx_tup_fetch FROM pg_stat_xact_user_tables
         WHERE schemaname = $1 AND relname IN ('executions', 'flows', 'timers', 'workers') ORDER BY relname`,
        [schema.schema],
      );
      const rowsRead = counts.reduce((sum, row) => sum + Number(row["seq_tup_read"]) + Number(row["idx_tup_fetch"]), 0);
      // A scan the executor stops after a row or a few (a hash join whose other side came up empty; a clean-clone
      // run saw three such scans of one row each) reads no more with more Flows; one that reads a row per waiting
      // Flow (200 here) is what this test is after.
      const scans = counts.filter((row) => Number(row["seq_tup_read"]) > 10).map((row) => `${row["relname"]}: ${row["seq_scan"]} sequential scans, ${row["seq_tup_read"]} rows`).join("; ");
      return { rowsRead, scans };
    });
  } finally {
    await schema.dispose();
  }
}

describe("an idle Worker's polls on PostgreSQL", { skip: postgresTestSkip(testDatabaseUrl()) }, () => {
  it("read as many rows with 200 Flows waiting as with 20, even with statistics a burst left stale", async () => {
    const small = await idleReadsWith(20);
    const large = await idleReadsWith(200);
    assert.equal(large.scans, "", `sequential scans at 200 waiting Flows: ${large.scans}`);
    // Each poll reads at most a row or two (the first due Timer); a scan would read one per waiting Flow.
    assert.ok(large.rowsRead < 20, `rows read by the polls with 200 waiting Flows: ${large.rowsRead}`);
    assert.ok(large.rowsRead <= small.rowsRead + 4, `rows read by the polls: ${small.rowsRead} with 20 waiting Flows, ${large.rowsRead} with 200`);
  });
});
