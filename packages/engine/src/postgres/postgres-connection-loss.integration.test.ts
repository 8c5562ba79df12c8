import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { attribute, attributeMap, Client, completeFlow, defineFlow, defineStep, moveTo, rpc, Worker } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();

const stepsPerFlow = 25;
const counter = attribute<number>("Counter");
const notes = attributeMap<boolean>("Notes");

const Count = defineStep<null>("Count", {
  execute: async (context) => {
    await delay(2 + Math.floor(Math.random() * 10));
    const next = (context.read(counter) ?? 0) + 1;
    context.write(counter, next);
    return next < stepsPerFlow ? moveTo("Count", null) : completeFlow({ counted: next });
  },
  // Default options: a commit lost with its connection is retried by its Worker until it lands or is fenced.
});

const countingFlow = defineFlow({
  type: "ConnectionLossCounter",
  start: "Count",
  steps: [Count],
  persistence: { counter, notes },
  rpcs: {
    note: rpc<{ key: string }, null>({
      name: "note",
      handler: async (context, input) => {
        await context.write(notes.instance(input.key), true);
        return null;
      },
    }),
  },
});

void test("when every connection of a Worker and Client is terminated mid-run (twice), they reconnect, every Flow finishes, and no acknowledged commit is lost", {
  timeout: 60_000,
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const applicationName = `perdure_loss_${randomBytes(4).toString("hex")}`;
  const errors: unknown[] = [];
  const temporary = createTemporaryPostgresSchema(url, { applicationName, poolSize: 4, onError: (error) => errors.push(error) });
  const store = await temporary.open();
  const admin = new pg.Client({ connectionString: url });
  let adminEnded = false;
  admin.on("error", () => undefined);
  admin.on("end", () => {
    adminEnded = true;
  });
  await admin.connect();
  const worker = new Worker({ store, flows: [countingFlow], onError: (error) => errors.push(error) });
  t.after(async () => {
    await worker.close().catch(() => undefined);
    // end() on a connection that already ended never settles.
    if (!adminEnded) await admin.end();
    await temporary.dispose();
  });
  await worker.start();
  const client = new Client({ store });
  const flowIds = Array.from({ length: 16 }, (_, index) => `loss-${index}`);
  for (const flowId of flowIds) await client.start(countingFlow, flowId);

  // RPCs keep committing while connections die; the ones that returned must all be there at the end.
  const acknowledged: { flowId: string; key: string }[] = [];
  let rpcFailures = 0;
  let stopRpcs = false;
  const rpcLoop = (async () => {
    for (let index = 0; !stopRpcs; index++) {
      const flowId = flowIds[index % flowIds.length]!;
      const key = `note-${index}`;
      try {
        await client.invokeRPC(countingFlow.note, flowId, { key });
        acknowledged.push({ flowId, key });
      } catch {
        rpcFailures++;
      }
      await delay(3);
    }
  })();

  let terminated = 0;
  for (let round = 0; round < 2; round++) {
    await delay(400);
    const result = await admin.query<{ pid: number }>(
      `SELECT pid, pg_terminate_backend(pid) AS terminated
       FROM (SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()) victims`,
      [applicationName],
    );
    terminated += result.rows.length;
  }
  await delay(300);
  stopRpcs = true;
  await rpcLoop;

  await pollUntil(async () => (await client.listFlows({ flowType: countingFlow.flowType, status: "running", limit: 1 })).length === 0, {
    timeoutMs: 60_000, intervalMs: 100, description: "every Flow to finish after the connections came back",
  });
  for (const flowId of flowIds) {
    const description = await client.describe(flowId);
    if (description.status !== "completed") console.log("DEBUG", flowId, JSON.stringify(await client.getStepHistory(flowId)), errors.map(String));
    assert.equal(description.status, "completed", `${flowId}: ${JSON.stringify(description)}`);
    const [count] = await client.getAttributes(flowId, counter);
    assert.equal(count, stepsPerFlow, `${flowId}: counted ${count}`);
    const history = await client.getStepHistory(flowId);
    if (history.filter((entry) => entry.method === "execute" && entry.status === "completed").length !== stepsPerFlow) console.log("DEBUG", flowId, JSON.stringify(history.map((entry) => [entry.executionId, entry.method, entry.status, entry.attempt, entry.error])));
    assert.equal(history.filter((entry) => entry.method === "execute" && entry.status === "completed").length, stepsPerFlow);
  }
  for (const { flowId, key } of acknowledged) {
    const [value] = await client.getAttributes(flowId, notes.instance(key));
    assert.equal(value, true, `${flowId}: the acknowledged RPC ${key} was lost`);
  }
  const summary = `${terminated} connections terminated, ${acknowledged.length} RPCs acknowledged, ${rpcFailures} failed with their connection, ${errors.length} errors reported`;
  t.diagnostic(summary);
  console.log(`postgres connection loss: ${summary}`);
  assert.ok(terminated >= 2, "the test terminated no connections");
  assert.ok(acknowledged.length > 0);
});

void test("a read whose connection is terminated between its statements runs again on a fresh connection and answers", {
  timeout: 60_000,
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const applicationName = `perdure_read_${randomBytes(4).toString("hex")}`;
  const temporary = createTemporaryPostgresSchema(url, { applicationName, poolSize: 1 });
  const store = await temporary.open();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(async () => {
    await admin.end();
    await temporary.dispose();
  });
  const client = new Client({ store });
  await client.start(countingFlow, "read-victim");
  let tries = 0;
  const listed = await store.read!(async (transaction) => {
    tries++;
    const first = await transaction.listFlows({ flowType: countingFlow.flowType, limit: 10 });
    if (tries === 1) {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
      // The backend is gone once no connection of ours is left in pg_stat_activity.
      await pollUntil(async () => (await admin.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1", [applicationName])).rowCount === 0, { timeoutMs: 10_000, intervalMs: 20, description: "the read's backend to end" });
    }
    return [first, await transaction.listFlows({ flowType: countingFlow.flowType, limit: 10 })];
  });
  assert.equal(tries, 2, "the read ran again after its connection died");
  assert.deepEqual(listed.map((rows) => rows.map((row) => row.flowId)), [["read-victim"], ["read-victim"]]);
});
