import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { runMixedFlows } from "../testing/one-request-fixtures/mixed-flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** The rows of every engine table, ordered, with times and worker IDs left out: what both paths must agree on. */
async function tableRows(connectionString: string, schema: string): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const table = (name: string): string => `${pg.escapeIdentifier(schema)}.${name}`;
  try {
    return {
      flows: (await client.query(`SELECT flow_id, flow_type, status, input, output, error, request_id, next_seq FROM ${table("flows")} ORDER BY flow_id`)).rows,
      executions: (await client.query(`SELECT flow_id, execution_id, seq, step_type, input, status, attempt, execute_claims, conditions, wait_result, movement_options FROM ${table("executions")} ORDER BY flow_id, seq`)).rows,
      attributes: (await client.query(`SELECT flow_id, name, key, value FROM ${table("attributes")} ORDER BY flow_id, name, key`)).rows,
      history: (await client.query(`SELECT flow_id, seq, execution_id, step_type, method, status, attempt, outcome, error FROM ${table("history")} ORDER BY flow_id, seq`)).rows,
      locks: (await client.query(`SELECT * FROM ${table("locks")} ORDER BY flow_id, name`)).rows,
      timers: (await client.query(`SELECT flow_id, execution_id, timer_id, fired FROM ${table("timers")} ORDER BY flow_id, execution_id, timer_id`)).rows,
      streamHeads: (await client.query(`SELECT * FROM ${table("stream_heads")} ORDER BY flow_id, stream`)).rows,
      streamMessages: (await client.query(`SELECT flow_id, flow_type, stream, idx, value, bytes FROM ${table("stream_messages")} ORDER BY flow_id, stream, idx`)).rows,
      streamUsage: (await client.query(`SELECT * FROM ${table("stream_usage")} ORDER BY flow_type, stream`)).rows,
    };
  } finally {
    await client.end();
  }
}

async function runOnSchema(oneRequest: boolean): Promise<{ rows: Record<string, unknown[]>; dispose: () => Promise<void>; usedOneRequest: boolean; stoppedClaims: number }> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  const usedOneRequest = store.oneRequest !== undefined && oneRequest;
  if (!oneRequest) store.oneRequest = undefined;
  // Claims that stopped at a task the one-request claim could not take (the general path claimed it then).
  let stoppedClaims = 0;
  const operations = store.oneRequest;
  if (operations !== undefined) {
    const commitStep = operations.commitStep.bind(operations);
    const claimTasks = operations.claimTasks.bind(operations);
    operations.commitStep = async (commit) => {
      const reply = await commitStep(commit);
      if (reply.claimStopped) stoppedClaims += 1;
      return reply;
    };
    operations.claimTasks = async (claim) => {
      const reply = await claimTasks(claim);
      if (reply.claimStopped) stoppedClaims += 1;
      return reply;
    };
  }
  await runMixedFlows(store);
  return { rows: await tableRows(temporary.connectionString, temporary.schema), dispose: () => temporary.dispose(), usedOneRequest, stoppedClaims };
}

void test("Step commits, starts, Stream appends and heartbeats in one request leave exactly the rows the transactional path leaves", { skip, timeout: 120_000 }, async (t) => {
  const general = await runOnSchema(false);
  t.after(() => general.dispose());
  const oneRequest = await runOnSchema(true);
  t.after(() => oneRequest.dispose());
  assert.equal(general.usedOneRequest, false);
  assert.equal(oneRequest.usedOneRequest, true);
  assert.equal(general.rows["history"]!.length > 80, true, "the scenario committed the Steps it was meant to");
  assert.equal(general.rows["streamHeads"]!.length, 3, "every Flow wrote its Stream");
  assert.ok(general.rows["streamMessages"]!.length < 70, "the Stream's budget trimmed old messages");
  assert.deepEqual(oneRequest.rows, general.rows);
  // Migration 0008: the claim takes the Step with a lock and loads (Tally) in the same request.
  assert.equal(oneRequest.stoppedClaims, 0);
  assert.ok(general.rows["history"]!.some((entry) => (entry as { step_type: string }).step_type === "Tally"), "the lock-and-load Step ran");
});
