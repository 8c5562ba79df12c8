import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { startAndClaim } from "../testing/one-request-fixtures/chain-commit.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

void test("a one-request heartbeat extends only a lease its attempt holds, capped at the deadline, and stores the checkpoint", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest!;
  assert.ok(operations.heartbeat !== undefined, "the PostgreSQL store offers one-request heartbeats");
  const commit = await startAndClaim(store, operations, "beating");
  const client = new pg.Client({ connectionString: temporary.connectionString });
  await client.connect();
  t.after(() => client.end());
  const row = async (): Promise<{ lease: number; deadline: number; checkpoint: string | null }> => {
    const result = await client.query<{ lease: string; deadline: string; checkpoint: string | null }>(
      `SELECT lease_expires_at AS lease, deadline_at AS deadline, checkpoint FROM ${pg.escapeIdentifier(temporary.schema)}.executions WHERE flow_id = $1 AND execution_id = $2`,
      ["beating", commit.executionId],
    );
    const found = result.rows[0]!;
    return { lease: Number(found.lease), deadline: Number(found.deadline), checkpoint: found.checkpoint };
  };
  const before = await row();
  const beat = { flowId: "beating", executionId: commit.executionId, workerId: "worker-a", leaseToken: commit.leaseToken, now: before.deadline - 10_000 };

  assert.equal(await operations.heartbeat({ ...beat, heartbeatTimeoutMs: 1000, checkpoint: "page 2" }), true);
  assert.deepEqual(await row(), { lease: beat.now + 1000, deadline: before.deadline, checkpoint: "page 2" });
  // Past the deadline the lease stops at it; without a heartbeat timeout the lease is the deadline.
  assert.equal(await operations.heartbeat({ ...beat, heartbeatTimeoutMs: 60_000, checkpoint: null }), true);
  assert.deepEqual(await row(), { lease: before.deadline, deadline: before.deadline, checkpoint: null });
  assert.equal(await operations.heartbeat({ ...beat, now: beat.now + 5, heartbeatTimeoutMs: null, checkpoint: "page 3" }), true);
  assert.deepEqual(await row(), { lease: before.deadline, deadline: before.deadline, checkpoint: "page 3" });

  // Another token or another Worker holds nothing: the row stays as it was.
  assert.equal(await operations.heartbeat({ ...beat, leaseToken: commit.leaseToken + 1, heartbeatTimeoutMs: 1000, checkpoint: "stolen" }), false);
  assert.equal(await operations.heartbeat({ ...beat, workerId: "worker-b", heartbeatTimeoutMs: 1000, checkpoint: "stolen" }), false);
  assert.equal(await operations.heartbeat({ ...beat, executionId: "999", heartbeatTimeoutMs: 1000, checkpoint: "stolen" }), false);
  assert.deepEqual(await row(), { lease: before.deadline, deadline: before.deadline, checkpoint: "page 3" });
});

void test("a one-request Stream append wakes readers in this process and in another one, and trims an overfull budget", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const writer = await temporary.open();
  const reader = await temporary.open();
  const heard = (store: typeof writer): Promise<unknown> => new Promise((resolve) => {
    const stop = store.subscribe((event) => {
      if (event.kind !== "stream") return;
      stop();
      resolve(event);
    });
  });
  const here = heard(writer);
  const there = heard(reader);
  const append = { flowId: "streaming", flowType: "Streaming", stream: "Progress", writtenAt: writer.clock.now(), capacityBytes: 25 };
  assert.equal(await writer.oneRequest!.appendStream!({ ...append, value: "\"first message\"" }), 1);
  assert.deepEqual(await here, { kind: "stream", flowId: "streaming", stream: "Progress" });
  assert.deepEqual(await there, { kind: "stream", flowId: "streaming", stream: "Progress" });
  // 15 + 16 bytes exceed the budget of 25: the first message goes.
  assert.equal(await writer.oneRequest!.appendStream!({ ...append, value: "\"second message\"" }), 2);
  const read = await reader.read((transaction) => transaction.readStream("streaming", "Progress", 0, 10));
  assert.deepEqual(read.rows.map((row) => [row.index, row.value]), [[2, "\"second message\""]]);
  assert.equal(read.firstIndex, 2);
});

void test("a one-request Stream batch numbers each Stream in order, trims as single appends do, wakes another process once per Stream, and takes what jsonb would refuse", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const writer = await temporary.open();
  const reader = await temporary.open();
  assert.ok(writer.oneRequest?.appendStreams !== undefined, "the PostgreSQL store offers one-request Stream batches (migration 0013)");
  const heard: string[] = [];
  const both = new Promise<void>((resolve) => {
    const stop = reader.subscribe((event) => {
      if (event.kind !== "stream" || event.flowId !== "batching") return;
      heard.push(event.stream);
      if (heard.includes("Other") && heard.includes("Progress")) {
        stop();
        resolve();
      }
    });
  });
  const append = (stream: string, value: string, capacityBytes = 1000): { flowId: string; flowType: string; stream: string; value: string; writtenAt: number; capacityBytes: number } =>
    ({ flowId: "batching", flowType: "Batching", stream, value, writtenAt: writer.clock.now(), capacityBytes });
  // A lone surrogate (a string cut inside an emoji) goes in as the single append's text parameter takes it.
  const cut = "\"cut \ud83d\"";
  assert.deepEqual(await writer.oneRequest!.appendStreams!([
    append("Other", "\"o1\""), append("Other", cut),
    append("Progress", "\"first message\"", 25), append("Progress", "\"second message\"", 25),
  ]), [1, 2, 1, 2]);
  await both;
  assert.equal(await writer.oneRequest!.appendStream!(append("Other", cut)), 3);
  const other = await reader.read((transaction) => transaction.readStream("batching", "Other", 0, 10));
  assert.deepEqual(other.rows.map((row) => row.index), [1, 2, 3]);
  assert.equal(other.rows[1]?.value, other.rows[2]?.value, "the batch stored the cut value as the single append did");
  // 15 + 16 bytes exceed the budget of 25: the first message went, inside the batch.
  const progress = await reader.read((transaction) => transaction.readStream("batching", "Progress", 0, 10));
  assert.deepEqual(progress.rows.map((row) => [row.index, row.value]), [[2, "\"second message\""]]);
});
