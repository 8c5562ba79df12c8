/**
 * A live Worker's finished attempt survives a PostgreSQL outage longer than
 * the liveness timeout: the server is stopped hard (`pg_ctl stop -m
 * immediate`) while a single-attempt write's handler is still running, the
 * handler then returns, so its commit fails, and the server comes back 7 s
 * later, after every Worker's liveness row has lapsed. Four other Worker
 * processes sweep for lapsed leases all the while. The held commit must win:
 * the write is committed once, and the attempt is never failed as a lost
 * Worker (which would route it to recovery, where a session records
 * `outcome_unknown` with a text that calls a live Worker stopped). Default
 * options throughout.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, Worker } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { startWorkerProcess, type WorkerProcess } from "../testing/worker-process.ts";
import { PostgresStore } from "./runtime/postgres-store.ts";
import { heldWriteFlow, heldWriteHandler, heldWriteRecovered } from "./test-fixtures/held-write-flow.ts";
import { startPrivatePostgresCluster } from "./test-fixtures/private-postgres-cluster.ts";

const sweeperMain = fileURLToPath(new URL("./test-fixtures/held-write-sweeper-main.ts", import.meta.url));
/** Longer than the default liveness timeout (5 s): every liveness row lapses meanwhile. */
const outageMs = 7000;
const sweeperCount = 4;

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

void test("a live Worker's held commit wins over other Workers' liveness sweeps after a PostgreSQL outage longer than the liveness timeout, with default options", { timeout: 300_000 }, async (t) => {
  const cluster = startPrivatePostgresCluster(await freePort());
  t.after(() => cluster.remove());
  const errors: unknown[] = [];
  const onError = (error: unknown): void => {
    errors.push(error);
  };
  const clientStore = await PostgresStore.open({ connectionString: cluster.url, onError });
  const holderStore = await PostgresStore.open({ connectionString: cluster.url, onError });
  const holder = new Worker({ store: holderStore, flows: [heldWriteFlow], onError });
  const sweepers: WorkerProcess[] = [];
  t.after(async () => {
    for (const sweeper of sweepers) await sweeper.kill();
    await holder.close().catch(() => undefined);
    for (const store of [holderStore, clientStore]) await store.close().catch(() => undefined);
  });
  const handlerStarted = new Promise<void>((resolve) => {
    heldWriteHandler.started = resolve;
  });
  let returnFromHandler: () => void = () => undefined;
  heldWriteHandler.release = new Promise<void>((resolve) => {
    returnFromHandler = resolve;
  });
  await holder.start();
  const client = new Client({ store: clientStore });
  await client.start(heldWriteFlow, "refund-7", null);
  await handlerStarted;
  // The others start once the holder has the attempt, so only their sweeps can reach it.
  for (let index = 0; index < sweeperCount; index += 1) {
    sweepers.push(await startWorkerProcess({ entryModulePath: sweeperMain, env: { PERDURE_HELD_WRITE_URL: cluster.url } }));
  }

  cluster.crash();
  returnFromHandler();
  await delay(outageMs);
  cluster.restart();

  await pollUntil(async () => {
    try {
      return (await client.describe("refund-7")).status !== "running";
    } catch {
      return false;
    }
  }, { timeoutMs: 60_000, intervalMs: 100, description: "the Flow to finish after the database came back" });
  const description = await client.describe("refund-7");
  const [recoveryError] = await client.getAttributes("refund-7", heldWriteRecovered);
  const history = await client.getStepHistory("refund-7");
  assert.equal(recoveryError, undefined, `the held attempt was failed: ${JSON.stringify(recoveryError)}`);
  assert.deepEqual(description.output, { written: true }, "the handler's result was committed");
  assert.deepEqual(history.map((entry) => [entry.stepType, entry.method, entry.status]), [["Write", "execute", "completed"]]);
  assert.equal(heldWriteHandler.runs, 1);
  t.diagnostic(`${errors.length} store errors reported in the test process during the outage`);
});
