import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StepCommit } from "../store/step-commit.ts";
import { startAndClaim } from "../testing/one-request-fixtures/chain-commit.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { commitRequestOf } from "./runtime/postgres-one-request.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

const ChainStep = defineStep<{ remaining: number }>("Chain", {
  execute: (_context, input) => (input.remaining > 0 ? moveTo("Chain", { remaining: input.remaining - 1 }) : completeFlow({ done: true })),
});
const chainFlow = defineFlow({ type: "HandoverChain", start: "Chain", steps: [ChainStep] });

/**
 * Puts a counting wrapper in front of the schema's claim function (0023's
 * `perdure_claim_compact`, which every claim of the store calls): every
 * call, from any session, takes a number from a sequence (which no rollback
 * gives back). Returns how to read the count.
 */
async function countClaimFunctionCalls(connectionString: string, schema: string): Promise<() => Promise<number>> {
  const quoted = pg.escapeIdentifier(schema);
  const admin = new pg.Client({ connectionString });
  await admin.connect();
  try {
    await admin.query(`CREATE SEQUENCE ${quoted}.claim_calls;
      ALTER FUNCTION ${quoted}.perdure_claim_compact(text, text[], jsonb, integer, bigint) RENAME TO perdure_claim_compact_counted;
      CREATE FUNCTION ${quoted}.perdure_claim_compact(p_worker_id text, p_flow_types text[], p_catalog jsonb, p_limit integer, p_now bigint)
      RETURNS jsonb LANGUAGE plpgsql AS $function$
      BEGIN
        PERFORM nextval('${quoted}.claim_calls');
        RETURN ${quoted}.perdure_claim_compact_counted(p_worker_id, p_flow_types, p_catalog, p_limit, p_now);
      END
      $function$;`);
  } finally {
    await admin.end();
  }
  return async () => {
    const reader = new pg.Client({ connectionString });
    await reader.connect();
    try {
      const { rows } = await reader.query<{ last_value: string; is_called: boolean }>(`SELECT last_value, is_called FROM ${quoted}.claim_calls`);
      return rows[0]?.is_called === true ? Number(rows[0].last_value) : 0;
    } finally {
      await reader.end();
    }
  };
}

void test("on PostgreSQL a chain Step's commit hands the next Step to its Worker without calling the claim function while nothing else waits", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const claimCalls = await countClaimFunctionCalls(temporary.connectionString, temporary.schema);
  const client = new Client({ store });
  // The Worker loop's own claims call the function too: once at start, then only on a poll, which is long here.
  const worker = new Worker({ store, flows: [chainFlow], concurrency: 2, pollIntervalMs: 60_000 });
  await worker.start();
  try {
    await pollUntil(async () => (await claimCalls()) >= 1, { timeoutMs: 10_000, description: "the Worker loop's first claim, through the counting wrapper" });
    // The loop may claim once more as it settles; count from when it has gone quiet.
    let before = await claimCalls();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const now = await claimCalls();
      if (now === before) break;
      before = now;
    }
    await client.start(chainFlow, "handed-over", { remaining: 10 });
    const ended = await client.waitForFlow("handed-over", { timeoutMs: 30_000 });
    assert.equal(ended.status, "completed");
    assert.deepEqual(ended.output, { done: true });
    const history = await client.getStepHistory("handed-over");
    assert.equal(history.length, 11);
    assert.ok(history.every((entry) => entry.attempt === 1 && entry.status === "completed"));
    // Ten commits handed their next Step over. The last queues none and claims by scanning; it found
    // nothing, so the Worker loop it wakes does not claim again. Without the handover: eleven calls.
    assert.equal(await claimCalls(), before + 1, "only the chain's final commit called the claim function");
  } finally {
    await worker.close();
  }
});

void test("on PostgreSQL the handed-over row a Worker builds from the short reply is the row the function wrote, and a request without `handover` (a process of the previous version) still gets the whole row", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);

  const commit = await startAndClaim(store, operations, "short-reply");
  const reply = await operations.commitStep(commit);
  assert.equal(reply.outcome, "committed");
  const read = await operations.readFlow("short-reply");
  assert.equal(read?.executions[0]?.claimedBy, "worker-a", "the new Step went in leased to the committing Worker");
  assert.deepEqual(reply.claims.map((claim) => claim.execution), read?.executions);

  // The function's two replies, called as each version of the client calls it.
  const admin = new pg.Client({ connectionString: temporary.connectionString });
  await admin.connect();
  t.after(() => admin.end());
  const callFunction = async (step: StepCommit, handover: boolean): Promise<Record<string, unknown>> => {
    const { handover: leaseTimes, ...previousVersion } = commitRequestOf(step, { timeoutMs: 300_000, heartbeatTimeoutMs: null });
    // A process of the previous version sends no `handover` at all.
    const request = handover ? { ...previousVersion, handover: leaseTimes } : previousVersion;
    const { rows } = await admin.query<{ reply: Record<string, unknown> }>(
      `SELECT ${pg.escapeIdentifier(temporary.schema)}.perdure_commit_step($1::jsonb, $2::jsonb) AS reply`,
      [JSON.stringify(request), JSON.stringify(step.claim?.catalog)],
    );
    return rows[0]!.reply;
  };
  const short = await callFunction(await startAndClaim(store, operations, "short-call"), true);
  assert.deepEqual([short["outcome"], short["claimed"], short["handed"]], ["committed", undefined, { seq: 2, attributes: [] }]);
  const whole = await callFunction(await startAndClaim(store, operations, "previous-version"), false);
  const claims = (whole["claimed"] as { claims: { execution: Record<string, unknown> }[] }).claims;
  assert.equal(whole["handed"], undefined);
  assert.deepEqual(claims.map(({ execution }) => [execution["flow_id"], execution["execution_id"], execution["claimed_by"], execution["attempt"]]), [["previous-version", "2", "worker-a", 1]]);
});
