/**
 * A Step commit carries the attempt's last Stream messages: they land in the
 * commit's transaction, in order, and wake readers; a fenced commit leaves
 * them to be written alone, so a superseded attempt's output stays.
 * docs/decisions/2026-12-07-stream-writes-in-the-step-commit.md
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StreamAppend } from "../store/step-commit.ts";
import type { Store } from "../store/store.ts";
import { stream } from "../stream/stream.ts";
import { startAndClaim } from "../testing/one-request-fixtures/chain-commit.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const Progress = stream<string>("Progress");
/** Lets the test act while a Write attempt has written and not yet returned. */
let beforeReturn: () => Promise<void> = () => Promise.resolve();
const Write = defineStep<{ words: string[] }>("Write", {
  execute: async (context, input) => {
    for (const word of input.words) await context.writeStream(Progress, word);
    await beforeReturn();
    return completeFlow({ wrote: input.words.length });
  },
});
/** What the Stream held when a Beat attempt's heartbeat returned. */
let seenAfterHeartbeat: (() => Promise<void>) | undefined;
const Beat = defineStep<{ words: string[] }>("Beat", {
  execute: async (context, input) => {
    for (const word of input.words) await context.writeStream(Progress, word);
    await context.heartbeat();
    await seenAfterHeartbeat?.();
    await context.writeStream(Progress, "after");
    return completeFlow({ wrote: input.words.length + 1 });
  },
});
const writingFlow = defineFlow({ type: "Writing", start: "Write", steps: [Write], persistence: { progress: Progress } });
const beatingFlow = defineFlow({ type: "Beating", start: "Beat", steps: [Beat], persistence: { progress: Progress } });

/** A heartbeat stores what the attempt wrote before it (in the heartbeat's own request where the store can), before the handler goes on. */
async function storeAtHeartbeat(store: Store): Promise<void> {
  const requests = countStreamRequests(store);
  const worker = new Worker({ store, flows: [beatingFlow] });
  await worker.start();
  let seen: [number, string][] = [];
  seenAfterHeartbeat = async () => {
    seen = await storedWords(store, "beating");
  };
  try {
    const client = new Client({ store });
    await client.start(beatingFlow, "beating", { words: ["first", "second"] });
    assert.deepEqual((await client.waitForFlow("beating", { timeoutMs: 60_000 })).output, { wrote: 3 });
    assert.deepEqual(seen, [[1, "first"], [2, "second"]]);
    assert.deepEqual(await storedWords(store, "beating"), [[1, "first"], [2, "second"], [3, "after"]]);
    if (store.oneRequest?.commitsStreams === true && store.oneRequest.embedded !== true) assert.equal(requests.count, 0, "no Stream request of its own");
  } finally {
    seenAfterHeartbeat = undefined;
    await worker.close();
  }
}

/** Counts the Stream requests a store gets outside Step commits. */
function countStreamRequests(store: Store): { count: number } {
  const counted = { count: 0 };
  const operations = store.oneRequest as { appendStreams?: (batch: readonly StreamAppend[]) => Promise<number[]> } | undefined;
  const appendStreams = operations?.appendStreams;
  if (operations !== undefined && appendStreams !== undefined) {
    operations.appendStreams = (batch) => {
      counted.count += 1;
      return appendStreams(batch);
    };
  }
  return counted;
}

async function storedWords(store: Store, flowId: string): Promise<[number, string][]> {
  const read = await store.transaction((transaction) => transaction.readStream(flowId, Progress.name, 0, 100));
  return read.rows.map((row) => [row.index, JSON.parse(row.value) as string]);
}

async function landWithCommit(writer: Store, reader: Store): Promise<void> {
  const requests = countStreamRequests(writer);
  const worker = new Worker({ store: writer, flows: [writingFlow] });
  await worker.start();
  try {
    const client = new Client({ store: writer });
    const readerClient = new Client({ store: reader });
    // A reader that waits on the other store before anything is written; it is woken by the commit.
    const read = readerClient.readStream("landing", Progress, { waitMs: 60_000, limit: 10 });
    await client.start(writingFlow, "landing", { words: ["one", "two", "three"] });
    assert.deepEqual((await client.waitForFlow("landing", { timeoutMs: 60_000 })).output, { wrote: 3 });
    assert.deepEqual((await read).messages.map((message) => message.value), ["one", "two", "three"]);
    assert.deepEqual(await storedWords(writer, "landing"), [[1, "one"], [2, "two"], [3, "three"]]);
    // The second run continues the Stream's numbering: the commit moved the head.
    await client.start(writingFlow, "landing-2", { words: ["four"] });
    await client.waitForFlow("landing-2", { timeoutMs: 60_000 });
    assert.deepEqual(await storedWords(writer, "landing-2"), [[1, "four"]]);
    if (writer.oneRequest?.commitsStreams === true && writer.oneRequest.embedded !== true) assert.equal(requests.count, 0, "no Stream request of its own");
  } finally {
    await worker.close();
  }
}

/** A Write attempt whose lease another Worker took while it ran: its commit is fenced, and its output is stored alone. */
async function keepFencedOutput(store: Store, bumpLease: (flowId: string) => Promise<void>): Promise<void> {
  const worker = new Worker({ store, flows: [writingFlow] });
  await worker.start();
  let returned!: () => void;
  const done = new Promise<void>((resolve) => {
    returned = resolve;
  });
  beforeReturn = async () => {
    await bumpLease("fenced");
    returned();
  };
  try {
    await new Client({ store }).start(writingFlow, "fenced", { words: ["kept", "anyway"] });
    await done;
    let words: [number, string][] = [];
    for (let tries = 0; tries < 600 && words.length < 2; tries += 1) {
      words = await storedWords(store, "fenced");
      if (words.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(words, [[1, "kept"], [2, "anyway"]]);
    assert.equal((await new Client({ store }).describe("fenced")).status, "running", "the fenced commit did not finish the Flow");
  } finally {
    beforeReturn = () => Promise.resolve();
    await worker.close();
  }
}

void test("SQLite: a Step's last Stream messages land with its commit and wake a reader of another store", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  // Dispose closes it.
  await landWithCommit(temporary.store, temporary.reopen());
});

void test("SQLite: a heartbeat stores the Stream messages written before it", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  await storeAtHeartbeat(temporary.store);
});

void test("PostgreSQL: a heartbeat stores the Stream messages written before it, in its own request", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  await storeAtHeartbeat(await temporary.open());
});

void test("PostgreSQL: a heartbeat carrying Stream messages extends a lease it holds, and stores them whether or not it holds it", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest!;
  const commit = await startAndClaim(store, operations, "beat");
  const message = (value: string): StreamAppend => ({ flowId: "beat", flowType: "OneRequestChain", stream: "Log", value, writtenAt: store.clock.now(), capacityBytes: 1000 });
  const beat = { flowId: "beat", executionId: commit.executionId, workerId: "worker-a", leaseToken: commit.leaseToken, now: store.clock.now(), heartbeatTimeoutMs: 1000, checkpoint: "page 2" };
  const lease = async (): Promise<[number, string | null]> => {
    const row = (await store.transaction((transaction) => transaction.getExecution("beat", commit.executionId)))!;
    return [row.leaseExpiresAt ?? 0, row.checkpoint];
  };
  assert.equal(await operations.heartbeat!({ ...beat, streams: [message('"one"'), message('"two"')] }), true);
  assert.deepEqual(await lease(), [beat.now + 1000, "page 2"]);
  assert.equal(await operations.heartbeat!({ ...beat, leaseToken: commit.leaseToken + 1, checkpoint: "stolen", streams: [message('"three"')] }), false);
  assert.deepEqual(await lease(), [beat.now + 1000, "page 2"]);
  const read = await store.transaction((transaction) => transaction.readStream("beat", "Log", 0, 10));
  assert.deepEqual(read.rows.map((row) => [row.index, row.value]), [[1, '"one"'], [2, '"two"'], [3, '"three"']]);
});

void test("SQLite: a fenced commit's Stream messages are written alone", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const database = new DatabaseSync(temporary.path);
  t.after(() => database.close());
  database.exec("PRAGMA busy_timeout = 10000");
  await keepFencedOutput(temporary.store, async (flowId) => {
    database.prepare("UPDATE executions SET lease_token = lease_token + 1 WHERE flow_id = ?").run(flowId);
  });
});

void test("PostgreSQL: a Step's last Stream messages land with its commit and wake a reader in another store", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const writer = await temporary.open();
  const reader = await temporary.open();
  assert.equal(writer.oneRequest?.commitsStreams, true, "migration 0020 is applied");
  await landWithCommit(writer, reader);
});

void test("PostgreSQL: a fenced commit's Stream messages are written alone", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const admin = new pg.Client({ connectionString: temporary.connectionString });
  await admin.connect();
  t.after(() => admin.end());
  await keepFencedOutput(store, async (flowId) => {
    await admin.query(`UPDATE ${pg.escapeIdentifier(temporary.schema)}.executions SET lease_token = lease_token + 1 WHERE flow_id = $1`, [flowId]);
  });
});

void test("PostgreSQL: a commit appends its Stream messages only when it lands, alone or in a group, and trims to the budget", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest!;
  const message = (flowId: string, stream: string, value: string, capacityBytes = 1000): StreamAppend => ({ flowId, flowType: "OneRequestChain", stream, value, writtenAt: store.clock.now(), capacityBytes });
  const read = async (flowId: string, stream: string): Promise<[number, string][]> =>
    (await store.transaction((transaction) => transaction.readStream(flowId, stream, 0, 100))).rows.map((row) => [row.index, row.value]);

  // Alone: numbering continues after a plain append, and the budget trims inside the commit.
  const alone = await startAndClaim(store, operations, "alone");
  await operations.appendStreams!([message("alone", "Log", "\"plain\"")]);
  // No movement: its Chain Step would be the next claim's.
  const landed = await operations.commitStep({ ...alone, movements: [], claim: undefined, streams: [message("alone", "Log", "\"a\""), message("alone", "Log", "\"b\""), message("alone", "Tiny", "\"first message\"", 25), message("alone", "Tiny", "\"second message\"", 25)] });
  assert.equal(landed.outcome, "committed");
  assert.deepEqual(await read("alone", "Log"), [[1, "\"plain\""], [2, "\"a\""], [3, "\"b\""]]);
  assert.deepEqual(await read("alone", "Tiny"), [[2, "\"second message\""]]);

  // Several at once (the group commit merges those that arrive while one is in flight): the fenced one appends nothing.
  const commits = [];
  // One by one: each claim takes the oldest queued start.
  for (const flowId of ["g1", "g2", "g3", "g4"]) commits.push(await startAndClaim(store, operations, flowId));
  const replies = await Promise.all(commits.map((commit, index) => operations.commitStep({
    ...commit, claim: undefined, leaseToken: index === 2 ? commit.leaseToken + 1 : commit.leaseToken, streams: [message(commit.flowId, "Log", `"${commit.flowId}"`)],
  })));
  assert.deepEqual(replies.map((reply) => reply.outcome), ["committed", "committed", "fenced", "committed"]);
  assert.deepEqual(await Promise.all(["g1", "g2", "g3", "g4"].map((flowId) => read(flowId, "Log"))), [[[1, "\"g1\""]], [[1, "\"g2\""]], [], [[1, "\"g4\""]]]);
});

void test("PostgreSQL: commits carrying Stream messages and plain batches of many Flows of one type, at once, all land", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open({ poolSize: 8 });
  const operations = store.oneRequest!;
  const message = (flowId: string, stream: string): StreamAppend => ({ flowId, flowType: "OneRequestChain", stream, value: "\"x\"", writtenAt: store.clock.now(), capacityBytes: 400 });
  const flowIds = Array.from({ length: 16 }, (_, index) => `busy-${String(index).padStart(2, "0")}`);
  const commits = [];
  for (const flowId of flowIds) commits.push(await startAndClaim(store, operations, flowId));
  // Every transaction takes a Flow's heads, then the shared byte counts (trimming, at a 400-byte budget):
  // commits write Stream B only or A and B, plain batches A and B, in every mix.
  const work = commits.flatMap((commit, index) => [
    operations.commitStep({ ...commit, claim: undefined, streams: index % 2 === 0 ? [message(commit.flowId, "B")] : [message(commit.flowId, "A"), message(commit.flowId, "B")] }),
    ...Array.from({ length: 4 }, () => operations.appendStreams!([message(commit.flowId, "A"), message(commit.flowId, "B")])),
  ]);
  const outcomes = await Promise.allSettled(work);
  assert.deepEqual(outcomes.filter((outcome) => outcome.status === "rejected"), []);
  const counts = await store.transaction(async (transaction) => {
    const rows = await Promise.all(flowIds.map(async (flowId) => (await transaction.readStream(flowId, "B", 0, 1000)).lastIndex));
    return rows;
  });
  assert.deepEqual(counts, flowIds.map(() => 5));
});
