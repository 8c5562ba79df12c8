import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { attribute } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, deadEnd, failFlow, moveTo, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const counter = attribute<number>("Counter");
const note = attribute<string>("Note");

/** Every kind of Step result the one-request commit takes: writes and deletes, moves, fan-out, dead ends, a wait without conditions, completion and failure. */
const CountStep = defineStep<{ remaining: number; fail: boolean }>("Count", {
  execute: (context, input) => {
    context.write(counter, (context.read(counter) ?? 0) + 1);
    context.write(note, input.remaining % 2 === 0 ? `even ${input.remaining}` : null);
    if (input.remaining > 0) return moveTo("Count", { ...input, remaining: input.remaining - 1 });
    return moveToMany([movement("Branch", { fail: input.fail }), movement("Idle", {})]);
  },
});
const IdleStep = defineStep("Idle", { execute: () => deadEnd() });
const BranchStep = defineStep<{ fail: boolean }>("Branch", {
  // No conditions: the execution is ready at once.
  waitUntil: () => null,
  execute: (context, input) => (input.fail ? failFlow(`flow ${context.flowId} failed on purpose`) : completeFlow({ counted: context.read(counter) })),
});
const mixedFlow = defineFlow({ type: "OneTripMixed", start: "Count", steps: [CountStep, IdleStep, BranchStep], persistence: { counter, note } });

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
    };
  } finally {
    await client.end();
  }
}

async function runMixedFlows(oneTrip: boolean): Promise<{ rows: Record<string, unknown[]>; dispose: () => Promise<void>; usedOneTrip: boolean }> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  const usedOneTrip = store.oneTrip !== undefined && oneTrip;
  if (!oneTrip) store.oneTrip = undefined;
  const client = new Client({ store });
  // One attempt at a time, so parallel executions of a Flow commit in the same order on both paths.
  const worker = new Worker({ store, flows: [mixedFlow], concurrency: 1 });
  await worker.start();
  const flows = [
    { flowId: "short", input: { remaining: 0, fail: false } },
    { flowId: "long", input: { remaining: 70, fail: false } },
    { flowId: "failing", input: { remaining: 3, fail: true } },
  ];
  try {
    for (const { flowId, input } of flows) assert.deepEqual(await client.start(mixedFlow, flowId, input, { requestId: `request-${flowId}` }), { created: true });
    // An idempotent second start changes nothing.
    assert.deepEqual(await client.start(mixedFlow, "short", { remaining: 0, fail: false }, { requestId: "request-short" }), { created: false });
    for (const { flowId } of flows) {
      await pollUntil(async () => (await client.describe(flowId)).status !== "running", { timeoutMs: 30_000, description: `${flowId} to finish` });
    }
  } finally {
    await worker.close();
  }
  return { rows: await tableRows(temporary.connectionString, temporary.schema), dispose: () => temporary.dispose(), usedOneTrip };
}

void test("Step commits and starts in one request leave exactly the rows the transactional path leaves", { skip, timeout: 120_000 }, async (t) => {
  const general = await runMixedFlows(false);
  t.after(() => general.dispose());
  const oneTrip = await runMixedFlows(true);
  t.after(() => oneTrip.dispose());
  assert.equal(general.usedOneTrip, false);
  assert.equal(oneTrip.usedOneTrip, true);
  assert.equal(general.rows["history"]!.length > 80, true, "the scenario committed the Steps it was meant to");
  assert.deepEqual(oneTrip.rows, general.rows);
});
