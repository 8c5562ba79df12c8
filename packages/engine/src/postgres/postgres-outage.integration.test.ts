/**
 * A PostgreSQL outage under load, with every option at its default: three
 * Workers run 120 Flows on a private cluster, the server is stopped hard
 * mid-run (`pg_ctl stop -m immediate`) and started again a few seconds
 * later. Every Flow must finish within seconds of the server's return, with
 * every Step committed exactly once.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { attribute, Client, completeFlow, defineFlow, defineStep, moveTo, Worker } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { PostgresStore } from "./runtime/postgres-store.ts";
import { startPrivatePostgresCluster } from "./test-fixtures/private-postgres-cluster.ts";

const stepsPerFlow = 12;
const flowCount = 120;
const counter = attribute<number>("Counter");

const Count = defineStep<null>("Count", {
  execute: async (context) => {
    await delay(100 + Math.floor(Math.random() * 100));
    const next = (context.read(counter) ?? 0) + 1;
    context.write(counter, next);
    return next < stepsPerFlow ? moveTo("Count", null) : completeFlow({ counted: next });
  },
});

const outageFlow = defineFlow({ type: "OutageCounter", start: "Count", steps: [Count], persistence: { counter } });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

void test("after the database is stopped hard mid-run and started again, every Flow of three Workers finishes within seconds, with default options", { timeout: 300_000 }, async (t) => {
  const cluster = startPrivatePostgresCluster(await freePort());
  t.after(() => cluster.remove());
  const errors: unknown[] = [];
  const onError = (error: unknown): void => {
    errors.push(error);
  };
  const stores = await Promise.all([0, 1, 2, 3].map(() => PostgresStore.open({ connectionString: cluster.url, onError })));
  t.after(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
  });
  const [clientStore, ...workerStores] = stores;
  assert.ok(clientStore !== undefined);
  const workers = workerStores.map((store) => new Worker({ store, flows: [outageFlow], onError }));
  t.after(async () => {
    for (const worker of workers) await worker.close().catch(() => undefined);
  });
  for (const worker of workers) await worker.start();
  const client = new Client({ store: clientStore });
  const flowIds = Array.from({ length: flowCount }, (_, index) => `outage-${index}`);
  for (const flowId of flowIds) await client.start(outageFlow, flowId);

  await delay(1500);
  const inFlight = workers.reduce((sum, worker) => sum + worker.activeCount, 0);
  cluster.crash();
  await delay(4000);
  cluster.restart();
  const restartedAt = Date.now();

  await pollUntil(async () => {
    try {
      return (await client.listFlows({ flowType: outageFlow.flowType, status: "running", limit: 1 })).length === 0;
    } catch {
      return false;
    }
  }, { timeoutMs: 120_000, intervalMs: 100, description: "every Flow to finish after the database came back" });
  const recoveryMs = Date.now() - restartedAt;
  for (const flowId of flowIds) {
    const description = await client.describe(flowId);
    assert.equal(description.status, "completed", `${flowId}: ${JSON.stringify(description)}`);
    const [count] = await client.getAttributes(flowId, counter);
    assert.equal(count, stepsPerFlow, `${flowId}: counted ${count}`);
  }
  const summary = `${inFlight} attempts in flight at the crash; every Flow finished ${recoveryMs} ms after the restart; ${errors.length} errors reported`;
  t.diagnostic(summary);
  console.log(`postgres outage: ${summary}`);
  assert.ok(inFlight > 0, "nothing was in flight when the database stopped");
  // Seconds, not the method timeout (10 minutes): nothing waited for a lease to expire.
  assert.ok(recoveryMs < 60_000, `recovery took ${recoveryMs} ms`);
});
