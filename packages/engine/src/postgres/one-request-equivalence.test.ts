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
      // Message IDs and publish times hold the commit time; the sequence number and the rest do not.
      messages: (await client.query(`SELECT flow_id, seq, channel, key, value FROM ${table("messages")} ORDER BY flow_id, seq`)).rows,
      timers: (await client.query(`SELECT flow_id, execution_id, timer_id, fired FROM ${table("timers")} ORDER BY flow_id, execution_id, timer_id`)).rows,
      streamHeads: (await client.query(`SELECT * FROM ${table("stream_heads")} ORDER BY flow_id, stream`)).rows,
      streamMessages: (await client.query(`SELECT flow_id, flow_type, stream, idx, value, bytes FROM ${table("stream_messages")} ORDER BY flow_id, stream, idx`)).rows,
      streamUsage: (await client.query(`SELECT * FROM ${table("stream_usage")} ORDER BY flow_type, stream`)).rows,
    };
  } finally {
    await client.end();
  }
}

async function runOnSchema(oneRequest: boolean): Promise<{ rows: Record<string, unknown[]>; dispose: () => Promise<void>; usedOneRequest: boolean; stoppedClaims: number; waitCommits: number; publishCommits: number; waitResults: string[]; selectionsInClaims: number }> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  const usedOneRequest = store.oneRequest !== undefined && oneRequest;
  if (!oneRequest) store.oneRequest = undefined;
  // Claims that stopped at a task the one-request claim could not take (the general path claimed it then).
  let stoppedClaims = 0;
  // Commits of a wait with conditions, and with publishes, that the store applied in one request (migration 0009).
  let waitCommits = 0;
  let publishCommits = 0;
  // Claims whose selection the store read in the claim (migration 0010).
  let selectionsInClaims = 0;
  // The wait results of the executions the one-request claims took, as stored.
  const waitResults: string[] = [];
  const noteWaitResults = (claims: readonly { execution: { waitResult: string | null }; selection?: unknown }[]): void => {
    for (const { execution } of claims) if (execution.waitResult !== null) waitResults.push(execution.waitResult);
    for (const claim of claims) if (claim.selection !== undefined) selectionsInClaims += 1;
  };
  const operations = store.oneRequest;
  if (operations !== undefined) {
    const commitStep = operations.commitStep.bind(operations);
    const claimTasks = operations.claimTasks.bind(operations);
    operations.commitStep = async (commit) => {
      const reply = await commitStep(commit);
      if (reply.claimStopped) stoppedClaims += 1;
      if (reply.outcome === "committed" && (commit.wait ?? null) !== null) waitCommits += 1;
      if (reply.outcome === "committed" && (commit.publishes?.length ?? 0) > 0) publishCommits += 1;
      noteWaitResults(reply.claims);
      return reply;
    };
    operations.claimTasks = async (claim) => {
      const reply = await claimTasks(claim);
      if (reply.claimStopped) stoppedClaims += 1;
      noteWaitResults(reply.claims);
      return reply;
    };
  }
  await runMixedFlows(store);
  return { rows: await tableRows(temporary.connectionString, temporary.schema), dispose: () => temporary.dispose(), usedOneRequest, stoppedClaims, waitCommits, publishCommits, waitResults, selectionsInClaims };
}

void test("Step commits, starts, Stream appends and heartbeats in one request leave exactly the rows the transactional path leaves", { skip, timeout: 300_000 }, async (t) => {
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
  // Migration 0009: Collect's, Listen's and Gather's waits and Produce's three publishes were one request each.
  assert.deepEqual({ waits: oneRequest.waitCommits, publishes: oneRequest.publishCommits }, { waits: 3, publishes: 3 });
  assert.equal(general.waitCommits + general.publishCommits, 0);
  // Migration 0010: Produce's three claims and Gather's two (asked, then executed) read their static selections in the claim.
  assert.ok(oneRequest.selectionsInClaims >= 5, `${oneRequest.selectionsInClaims} claims read their selection`);
  // The store writes a matched wait's result as the JSON text JSON.stringify writes (field order included).
  const matched = oneRequest.waitResults.filter((text) => text.includes("Results") || text.includes("Signals"));
  assert.ok(matched.length >= 3, `wait results with messages: ${JSON.stringify(oneRequest.waitResults)}`);
  for (const text of matched) {
    const parsed = JSON.parse(text) as { firedTimers: string[]; messages: { name: string; key: string; messageId: string; value: string; publishedAt: number }[] };
    const canonical = JSON.stringify({
      firedTimers: parsed.firedTimers,
      messages: parsed.messages.map(({ name, key, messageId, value, publishedAt }) => ({ name, key, messageId, value, publishedAt })),
    });
    assert.equal(text, canonical);
  }
  assert.ok(matched.some((text) => text.includes('"firedTimers":["due"]')), "Gather's all-of wait fired its due Timer");
  assert.ok(matched.some((text) => text.includes('"key":"key\\u0001one"')), "Listen's wait took the message under its escaped key");
  assert.ok(general.rows["attributes"]!.some((row) => (row as { name: string; value: string }).name === "SeenQueued" && (row as { value: string }).value !== ""), "a Channel load read queued messages");
  assert.deepEqual(general.rows["messages"]!.map((row) => (row as { value: string }).value), [], "every message was consumed");
});
