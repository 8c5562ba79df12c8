/**
 * Review of migration 0009's one-request Step commit against the general
 * transaction: waits that one publish commit completes together, a wait
 * matched in its own commit, odd payloads and keys, a fenced commit, and a
 * Channel key that is not well-formed UTF-16.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import type { FlowCore } from "../flow/flow.ts";
import { loneKeyFlow, reviewWaitsFlow } from "../testing/one-request-fixtures/review-waits.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

async function tableRows(connectionString: string, schema: string): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const table = (name: string): string => `${pg.escapeIdentifier(schema)}.${name}`;
  try {
    return {
      flows: (await client.query(`SELECT flow_id, flow_type, status, input, output, error, next_seq FROM ${table("flows")} ORDER BY flow_id`)).rows,
      executions: (await client.query(`SELECT flow_id, execution_id, seq, step_type, input, status, attempt, conditions, wait_result FROM ${table("executions")} ORDER BY flow_id, seq`)).rows,
      attributes: (await client.query(`SELECT flow_id, name, key, value FROM ${table("attributes")} ORDER BY flow_id, name, key`)).rows,
      history: (await client.query(`SELECT flow_id, seq, execution_id, step_type, method, status, attempt, outcome, error FROM ${table("history")} ORDER BY flow_id, seq`)).rows,
      messages: (await client.query(`SELECT flow_id, seq, channel, key, value FROM ${table("messages")} ORDER BY flow_id, seq`)).rows,
      timers: (await client.query(`SELECT flow_id, execution_id, timer_id, fired FROM ${table("timers")} ORDER BY flow_id, execution_id, timer_id`)).rows,
    };
  } finally {
    await client.end();
  }
}

interface Run {
  rows: Record<string, unknown[]>;
  output: string | undefined;
  oneRequestCommits: number;
  commitErrors: string[];
}

/** Runs one Flow to its end on a fresh schema, with or without the one-request operations, one attempt at a time. */
async function runFlow(flow: FlowCore, flowId: string, oneRequest: boolean): Promise<Run> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  try {
    if (!oneRequest) store.oneRequest = undefined;
    let oneRequestCommits = 0;
    const commitErrors: string[] = [];
    const operations = store.oneRequest;
    if (operations !== undefined) {
      const commitStep = operations.commitStep.bind(operations);
      operations.commitStep = async (commit) => {
        try {
          const reply = await commitStep(commit);
          if (reply.outcome === "committed" && ((commit.wait ?? null) !== null || (commit.publishes?.length ?? 0) > 0)) oneRequestCommits += 1;
          return reply;
        } catch (error) {
          commitErrors.push(error instanceof Error ? error.message : String(error));
          throw error;
        }
      };
    }
    const client = new Client({ store });
    const worker = new Worker({ store, flows: [flow], concurrency: 1 });
    await worker.start();
    try {
      assert.deepEqual(await client.start(flow, flowId, {}), { created: true });
      await pollUntil(async () => (await client.describe(flowId)).status !== "running" || commitErrors.length > 0, { timeoutMs: 30_000, description: `${flowId} to finish` });
    } finally {
      await worker.close();
    }
    const described = await client.describe(flowId);
    return { rows: await tableRows(temporary.connectionString, temporary.schema), output: described.output === undefined ? undefined : JSON.stringify(described.output), oneRequestCommits, commitErrors };
  } finally {
    await store.close();
    await temporary.dispose();
  }
}

void test("one publish commit completes several waits of one Flow as the general path does, with odd and large payloads", { skip, timeout: 120_000 }, async () => {
  const general = await runFlow(reviewWaitsFlow, "review", false);
  const oneRequest = await runFlow(reviewWaitsFlow, "review", true);
  assert.deepEqual(oneRequest.commitErrors, []);
  assert.equal(general.oneRequestCommits, 0);
  // Four waits, the publish commit and Final's wait, which matches in its own commit.
  assert.ok(oneRequest.oneRequestCommits >= 6, `one-request commits: ${oneRequest.oneRequestCommits}`);
  assert.equal(general.output, JSON.stringify({ left: 1 }));
  assert.deepEqual(oneRequest.rows, general.rows);
  const seen = (general.rows["attributes"] as { name: string; key: string; value: string }[]).filter((row) => row.name === "Seen").map((row) => JSON.parse(row.value) as string);
  assert.equal(seen.length, 4, "every wait ran its execute");
});

void test("a Channel key with a lone surrogate: the one-request path commits the wait and the publish as the general path does", { skip, timeout: 120_000 }, async () => {
  const general = await runFlow(loneKeyFlow, "lone", false);
  assert.equal(general.output, JSON.stringify({ got: ["hello", "world"] }));
  const oneRequest = await runFlow(loneKeyFlow, "lone", true);
  assert.deepEqual(oneRequest.commitErrors, []);
  assert.equal(oneRequest.output, general.output);
  assert.deepEqual(oneRequest.rows, general.rows);
});
