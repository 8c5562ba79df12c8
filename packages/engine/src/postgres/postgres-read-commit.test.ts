import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { readDatabaseTimeSql } from "./runtime/database-clock.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** The text of every statement this process sends through `pg` while `work` runs. */
async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const sent: string[] = [];
  prototype.query = function recordingQuery(this: unknown, ...args: unknown[]): unknown {
    const first = args[0];
    sent.push(typeof first === "string" ? first : String((first as { text?: unknown }).text));
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    prototype.query = original;
  }
  return sent;
}

const relaxed = "SET LOCAL synchronous_commit = off";

void test("a PostgreSQL transaction that only reads commits without waiting for a WAL flush, and one that writes still waits", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const flow = defineFlow({ type: "ReadCommit", start: "Hold", steps: [defineStep("Hold", { execute: () => completeFlow() })] });
  const client = new Client({ store });
  await client.start(flow, "read-commit-1", {});

  // Locking the Flow row gives a transaction an ID, but changes nothing.
  const reading = await statementsDuring(() => store.transaction((transaction) => transaction.lockFlow("read-commit-1")));
  const commitAt = reading.indexOf("COMMIT");
  assert.ok(commitAt > 0, `describe committed: ${reading.join(" | ")}`);
  assert.equal(reading[commitAt - 1], relaxed);

  const writing = await statementsDuring(() => store.transaction(async (transaction) => {
    await transaction.lockFlow("read-commit-1");
    await transaction.writeAttribute("read-commit-1", "Note", "", "\"kept\"");
  }));
  assert.ok(writing.includes("COMMIT"));
  assert.ok(!writing.includes(relaxed), `a writing transaction relaxed its commit: ${writing.join(" | ")}`);
  assert.equal(await store.transaction((transaction) => transaction.readAttribute("read-commit-1", "Note", "")), "\"kept\"");
});

void test("describe on PostgreSQL is one statement that neither opens a transaction nor locks the Flow, and sees a Flow and its executions together", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const flow = defineFlow({ type: "ReadInOne", start: "Hold", steps: [defineStep("Hold", { execute: () => completeFlow() })] });
  const client = new Client({ store });
  await client.start(flow, "read-in-one-1", { note: "kept" });

  const sent = await statementsDuring(async () => {
    const description = await client.describe("read-in-one-1");
    assert.equal(description.status, "running");
    assert.deepEqual(description.input, { note: "kept" });
    assert.deepEqual(description.executions, [{ executionId: "1", stepType: "Hold", status: "ready" }]);
    assert.equal(description.createdAt.getTime(), description.updatedAt.getTime());
  });
  // A stale clock reading may ride along; it is not part of the read.
  const reads = sent.filter((text) => text !== readDatabaseTimeSql);
  assert.equal(reads.length, 1, reads.join(" | "));
  assert.ok(!/FOR (UPDATE|SHARE)|BEGIN|COMMIT/.test(reads[0] ?? ""), reads[0]);
  await assert.rejects(client.describe("no-such-flow"), { name: "FlowNotFoundError" });
});

void test("a read on PostgreSQL locks no Flow and sees one snapshot: a claim made while it is open takes the Flow's task, and Client reads use it", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const flow = defineFlow({ type: "ReadWithoutLock", start: "Hold", steps: [defineStep("Hold", { execute: () => completeFlow() })] });
  const client = new Client({ store });
  await client.start(flow, "read-without-lock", {});

  await store.read(async (reading) => {
    assert.equal((await reading.lockFlow("read-without-lock"))?.status, "running");
    // Another transaction, while the read is open: a claim scan, and a change to the Flow row.
    const claimable = await store.transaction(async (claiming) => {
      const found = await claiming.findClaimable([flow.flowType], store.clock.now(), 10);
      await claiming.updateFlow("read-without-lock", { updatedAt: 42 });
      return found;
    });
    assert.deepEqual(claimable.map((row) => row.flowId), ["read-without-lock"], "the claim did not pass the Flow over");
    const again = await reading.listFlows({ limit: 10 });
    assert.notEqual(again[0]?.updatedAt, 42, "the read kept its snapshot");
  });

  const sent = await statementsDuring(async () => {
    await client.getAttributes("read-without-lock");
    await client.getStepHistory("read-without-lock");
    await client.listFlows();
  });
  assert.ok(sent.some((text) => text === "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), sent.join(" | "));
  assert.ok(!sent.some((text) => /FOR (UPDATE|SHARE)/.test(text)), sent.join(" | "));
});
