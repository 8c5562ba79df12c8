/**
 * A process frozen inside a PostgreSQL transaction (SIGSTOP while it holds a
 * Flow's row lock) must not block that Flow for good: with default options
 * the server ends the idle-in-transaction session, and Client calls and
 * Workers go on.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { attribute, Client, defineFlow, defineStep, deadEnd, rpc, Worker } from "../index.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporaryPostgresSchema, missingDatabaseMessage, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const frozenMain = fileURLToPath(new URL("./test-fixtures/frozen-transaction-main.ts", import.meta.url));

const notes = attribute<string>("Note");
const Idle = defineStep("Idle", { execute: () => deadEnd() });
const frozenFlow = defineFlow({
  type: "FrozenHolder",
  start: "Idle",
  steps: [Idle],
  persistence: { notes },
  rpcs: { note: rpc<string, null>({ name: "note", handler: async (context, text) => { await context.write(notes, text); return null; } }) },
});

void test("a process SIGSTOPped inside a transaction holding a Flow's row lock stops blocking it once the server ends its idle session", {
  timeout: 90_000,
  skip: postgresTestSkip(url),
}, async (t) => {
  if (url === undefined) throw new Error(`this test cannot run in CI: ${missingDatabaseMessage}`);
  const temporary = createTemporaryPostgresSchema(url);
  const store = await temporary.open();
  const worker = new Worker({ store, flows: [frozenFlow], onError: () => undefined });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store });
  await client.start(frozenFlow, "held-1");
  await pollUntil(async () => (await client.getStepHistory("held-1")).length > 0, { description: "the start Step to commit" });

  const frozen = spawn(process.execPath, [frozenMain, url, temporary.schema, "held-1"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => {
    try {
      frozen.kill("SIGCONT");
      frozen.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  });
  await new Promise<void>((resolve, reject) => {
    frozen.stdout.on("data", (chunk: Buffer) => { if (chunk.toString().includes("locked")) resolve(); });
    frozen.once("exit", (code) => reject(new Error(`the frozen process exited early with ${String(code)}`)));
  });
  frozen.kill("SIGSTOP");
  const frozenAt = Date.now();
  // Blocks on the frozen process's row lock until the server ends its session (10 s by default).
  await client.invokeRPC(frozenFlow.note, "held-1", "written after the freeze");
  const waitedMs = Date.now() - frozenAt;
  t.diagnostic(`the RPC waited ${waitedMs} ms for the frozen process's lock`);
  assert.deepEqual(await client.getAttributes("held-1", notes), ["written after the freeze"]);
  assert.ok(waitedMs >= 5_000, `the RPC did not wait for the lock (${waitedMs} ms): the test froze nothing`);
  await client.stop("held-1");
  assert.equal((await client.describe("held-1")).status, "stopped");
});
