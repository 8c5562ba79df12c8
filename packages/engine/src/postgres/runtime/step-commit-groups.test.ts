import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import fc from "fast-check";
import pg from "pg";
import { Client } from "../../client/client.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow } from "../../step/decision.ts";
import { newExecutionRow } from "../../flow/flow-transaction.ts";
import { defineStep } from "../../step/step.ts";
import type { StepCommit, StepCommitReply } from "../../store/step-commit.ts";
import type { ExecutionRow } from "../../store/store.ts";
import { claimCatalogOf, withoutNumber } from "../../worker/one-request-commit.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "../temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const NoopStep = defineStep("Noop", { execute: () => completeFlow() });
const groupFlow = defineFlow({ type: "GroupCommit", start: "Noop", steps: [NoopStep] });
const workerId = "group-commit-test-worker";

type MemberKind = "ok" | "fenced" | "broken";

/** A commit of a claimed Noop execution that moves to a new Noop and writes a marker; `broken` carries a row the table refuses. */
function commitOf(execution: ExecutionRow, kind: MemberKind | "blocker" | "locked", now: number): StepCommit {
  const next = withoutNumber(newExecutionRow(groupFlow, execution.flowId, 0, { stepType: "Noop", input: "{}", options: null, recoveryError: null }, now));
  return {
    flowId: execution.flowId,
    executionId: execution.executionId,
    workerId,
    leaseToken: kind === "fenced" ? execution.leaseToken + 7 : execution.leaseToken,
    method: "execute",
    now,
    startedAt: now,
    writes: [{ name: "Marker", key: "", value: JSON.stringify(kind) }],
    // step_type is NOT NULL: the insert of this movement fails inside the member's block.
    movements: [kind === "broken" ? { ...next, stepType: null as unknown as string } : next],
    finish: null,
    ready: null,
    outcome: JSON.stringify({ kind: "move", moveTo: ["Noop"] }),
    historyKeep: 1000,
    holdsLocks: false,
    claim: undefined,
  };
}

void test("Step commits of different Flows that arrive together share one transaction; a fenced, a failing or a busy member changes only itself", { skip, timeout: 300_000 }, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const temporary = createTemporaryPostgresSchema(url);
  const store = await temporary.open({ poolSize: 4, maxCommitGroupsInFlight: 1 });
  const oneRequest = store.oneRequest;
  assert.ok(oneRequest !== undefined, "a freshly migrated schema has the one-request functions");
  const admin = new pg.Client({ connectionString: url });
  const blockerAdmin = new pg.Client({ connectionString: url });
  await admin.connect();
  await blockerAdmin.connect();
  t.after(async () => {
    await admin.end();
    await blockerAdmin.end();
    await temporary.dispose();
  });
  const table = (name: string): string => `${pg.escapeIdentifier(temporary.schema)}.${name}`;
  // Test instrumentation: the top-level transaction of every history row (a member's own rows carry
  // the xmin of its block's subtransaction, so xmin cannot tell).
  await admin.query(`CREATE TABLE ${table("history_transactions")} (flow_id text NOT NULL, transaction_id bigint NOT NULL)`);
  await admin.query(`CREATE FUNCTION ${table("record_history_transaction")}() RETURNS trigger LANGUAGE plpgsql AS $function$
    BEGIN INSERT INTO ${table("history_transactions")} VALUES (NEW.flow_id, txid_current()); RETURN NEW; END $function$`);
  await admin.query(`CREATE TRIGGER record_history_transaction AFTER INSERT ON ${table("history")} FOR EACH ROW EXECUTE FUNCTION ${table("record_history_transaction")}()`);
  const client = new Client({ store });
  const { flowTypes, catalog } = claimCatalogOf(new Map([[groupFlow.flowType, groupFlow]]));

  await fc.assert(fc.asyncProperty(
    fc.array(fc.constantFrom<MemberKind>("ok", "fenced", "broken"), { minLength: 2, maxLength: 8 }),
    fc.boolean(),
    async (kinds, withLockedMember) => {
      // Each run claims only its own tasks, whatever an earlier (failed) run left.
      await admin.query("ROLLBACK");
      await blockerAdmin.query("ROLLBACK");
      await admin.query(`DELETE FROM ${table("executions")}`);
      const run = randomBytes(4).toString("hex");
      const members = kinds.map((kind, index) => ({ kind, flowId: `${run}-member-${index}` }));
      const blockerId = `${run}-blocker`;
      const lockedId = `${run}-locked`;
      const flowIds = [blockerId, ...(withLockedMember ? [lockedId] : []), ...members.map((member) => member.flowId)];
      for (const flowId of flowIds) await client.start(groupFlow, flowId);
      const now = store.clock.now();
      const claimed = await oneRequest.claimTasks({ workerId, now, claim: { flowTypes, catalog, limit: flowIds.length } });
      const executions = new Map(claimed.claims.map((claim) => [claim.execution.flowId, claim.execution]));
      assert.equal(executions.size, flowIds.length);
      const executionOf = (flowId: string): ExecutionRow => executions.get(flowId)!;

      // The blocker's commit waits for its Flow's lock, so everything sent meanwhile queues for one group.
      await blockerAdmin.query("BEGIN");
      await blockerAdmin.query(`SELECT 1 FROM ${table("flows")} WHERE flow_id = $1 FOR UPDATE`, [blockerId]);
      if (withLockedMember) {
        await admin.query("BEGIN");
        await admin.query(`SELECT 1 FROM ${table("flows")} WHERE flow_id = $1 FOR UPDATE`, [lockedId]);
      }
      const blocker = oneRequest.commitStep(commitOf(executionOf(blockerId), "blocker", now));
      const settled = members.map((member) => oneRequest.commitStep(commitOf(executionOf(member.flowId), member.kind, now)).then(
        (reply): { reply: StepCommitReply } | { error: unknown } => ({ reply }),
        (error: unknown) => ({ error }),
      ));
      let lockedDone = false;
      const locked = withLockedMember ? oneRequest.commitStep(commitOf(executionOf(lockedId), "locked", now)).finally(() => {
        lockedDone = true;
      }) : undefined;
      await blockerAdmin.query("COMMIT");
      assert.equal((await blocker).outcome, "committed");
      const results = await Promise.all(settled);
      // The busy member was sent again on its own and still waits for its Flow's lock.
      assert.equal(lockedDone, false);
      if (withLockedMember) await admin.query("COMMIT");
      if (locked !== undefined) assert.equal((await locked).outcome, "committed");

      const transactions = new Set<string>();
      for (const [index, member] of members.entries()) {
        const result = results[index]!;
        const { flowId } = member;
        const marker = await admin.query<{ value: string }>(`SELECT value FROM ${table("attributes")} WHERE flow_id = $1 AND name = 'Marker'`, [flowId]);
        const history = await admin.query<{ transaction_id: string }>(`SELECT transaction_id::text FROM ${table("history_transactions")} WHERE flow_id = $1`, [flowId]);
        const original = await admin.query<{ claimed_by: string | null }>(`SELECT claimed_by FROM ${table("executions")} WHERE flow_id = $1 AND execution_id = $2`, [flowId, executionOf(flowId).executionId]);
        const all = await admin.query(`SELECT 1 FROM ${table("executions")} WHERE flow_id = $1`, [flowId]);
        if (member.kind === "ok") {
          assert.ok("reply" in result && result.reply.outcome === "committed", `${flowId}: ${JSON.stringify(result)}`);
          assert.deepEqual(marker.rows.map((row) => row.value), [JSON.stringify("ok")]);
          assert.equal(original.rows.length, 0, `${flowId}: the committed execution is gone`);
          assert.equal(all.rows.length, 1, `${flowId}: its movement is queued`);
          assert.equal(history.rows.length, 1);
          transactions.add(history.rows[0]!.transaction_id);
        } else {
          if (member.kind === "fenced") assert.ok("reply" in result && result.reply.outcome === "fenced", `${flowId}: ${JSON.stringify(result)}`);
          else assert.ok("error" in result && (result.error as { code?: unknown }).code === "23502", `${flowId}: ${JSON.stringify(result)}`);
          assert.equal(marker.rows.length, 0, `${flowId}: a ${member.kind} member wrote nothing`);
          assert.equal(history.rows.length, 0);
          assert.deepEqual(original.rows.map((row) => row.claimed_by), [workerId], `${flowId}: still leased as before`);
          assert.equal(all.rows.length, 1);
        }
      }
      // Every member that committed did so in the one group transaction.
      assert.ok(transactions.size <= 1, `committed members used ${transactions.size} transactions`);

    },
  ), { numRuns: 12 });
});
