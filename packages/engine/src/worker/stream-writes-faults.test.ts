/**
 * Stream messages carried by commits and heartbeats under faults and races:
 * a heartbeat not awaited while output goes on, a heartbeat or commit whose
 * request fails, a schema without migration 0020, the general path's commit
 * beside plain batches, and values whose JSON escapes jsonb must take as
 * they are. All but the last failed on the first version of the change.
 * docs/decisions/2026-12-07-stream-writes-in-the-step-commit.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { LeaseHeartbeat, StepCommit, StreamAppend } from "../store/step-commit.ts";
import type { Store } from "../store/store.ts";
import { stream } from "../stream/stream.ts";
import { Worker } from "./worker.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const Progress = stream<string>("Progress");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function storedWords(store: Store, flowId: string): Promise<[number, string][]> {
  const read = await store.transaction((transaction) => transaction.readStream(flowId, Progress.name, 0, 100));
  return read.rows.map((row) => [row.index, JSON.parse(row.value) as string]);
}

/** Hooks a probe sets per test. */
const hooks: { beforeHeartbeat: () => Promise<void>; afterLater: () => Promise<void> } = {
  beforeHeartbeat: () => Promise.resolve(),
  afterLater: () => Promise.resolve(),
};

// A model call with a background heartbeat (as packages/agents' withBackgroundHeartbeat): the heartbeat is not awaited
// while output goes on streaming.
const Stream = defineStep<Record<string, never>>("Stream", {
  execute: async (context) => {
    await context.writeStream(Progress, "before-heartbeat");
    await hooks.beforeHeartbeat();
    const beat = context.heartbeat().catch(() => undefined);
    await context.writeStream(Progress, "after-heartbeat");
    // Longer than the 20 ms window: the later message goes as a plain batch.
    await sleep(300);
    await hooks.afterLater();
    await beat;
    return completeFlow({});
  },
});
const streamingFlow = defineFlow({ type: "Streaming", start: "Stream", steps: [Stream], persistence: { progress: Progress } });

void test("PostgreSQL: a background heartbeat's messages are not overtaken by a later window's batch", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const admin = new pg.Client({ connectionString: temporary.connectionString });
  await admin.connect();
  t.after(() => admin.end());
  // Something else commits on the Flow (a user's message, a sibling Step) while the heartbeat is on its way.
  hooks.beforeHeartbeat = async () => {
    await admin.query("BEGIN");
    await admin.query(`SELECT 1 FROM ${pg.escapeIdentifier(temporary.schema)}.flows WHERE flow_id = $1 FOR UPDATE`, ["race"]);
  };
  hooks.afterLater = async () => {
    await admin.query("COMMIT");
  };
  t.after(() => {
    hooks.beforeHeartbeat = () => Promise.resolve();
    hooks.afterLater = () => Promise.resolve();
  });
  const worker = new Worker({ store, flows: [streamingFlow] });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(streamingFlow, "race", {});
    await client.waitForFlow("race", { timeoutMs: 60_000 });
    assert.deepEqual(await storedWords(store, "race"), [[1, "before-heartbeat"], [2, "after-heartbeat"]]);
  } finally {
    await worker.close();
  }
});

// A tool Step that heartbeats before its side effect, once the heartbeat's request fails (a dropped connection).
const Beat = defineStep<Record<string, never>>("Beat", {
  execute: async (context) => {
    await context.writeStream(Progress, "tool_call_started");
    await context.heartbeat().catch(() => undefined);
    await context.writeStream(Progress, "tool_call_finished");
    return completeFlow({});
  },
});
const beatingFlow = defineFlow({ type: "Beating", start: "Beat", steps: [Beat], persistence: { progress: Progress } });

void test("PostgreSQL: a heartbeat whose request fails loses no Stream message written before it", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest as unknown as { heartbeat: (heartbeat: LeaseHeartbeat) => Promise<boolean> };
  const heartbeat = operations.heartbeat.bind(operations);
  let failed = false;
  operations.heartbeat = async (beat) => {
    if (!failed) {
      failed = true;
      throw new Error("Connection terminated unexpectedly");
    }
    return heartbeat(beat);
  };
  const worker = new Worker({ store, flows: [beatingFlow] });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(beatingFlow, "beat", {});
    await client.waitForFlow("beat", { timeoutMs: 60_000 });
    assert.ok(failed);
    assert.deepEqual((await storedWords(store, "beat")).map(([, word]) => word), ["tool_call_started", "tool_call_finished"]);
  } finally {
    await worker.close();
  }
});

// A model call that ends inside an emoji (a lone surrogate in its last delta).
const Split = defineStep<Record<string, never>>("Split", {
  execute: async (context) => {
    await context.writeStream(Progress, "half \ud83d");
    return completeFlow({});
  },
});
const splitFlow = defineFlow({ type: "Splitting", start: "Split", steps: [Split], persistence: { progress: Progress } });

void test("PostgreSQL: a commit retried after a dropped connection stores its last Stream message once", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest as unknown as { commitStep: (commit: StepCommit) => Promise<unknown>; appendStreams: (batch: readonly StreamAppend[]) => Promise<number[]> };
  const commitStep = operations.commitStep.bind(operations);
  let batches = 0;
  const appendStreams = operations.appendStreams.bind(operations);
  operations.appendStreams = (batch) => {
    batches += 1;
    return appendStreams(batch);
  };
  let failed = false;
  operations.commitStep = async (commit) => {
    if (!failed && commit.flowId === "split") {
      failed = true;
      // The request never reached the server.
      throw new Error("Connection terminated unexpectedly");
    }
    return commitStep(commit);
  };
  const worker = new Worker({ store, flows: [splitFlow] });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(splitFlow, "split", {});
    await client.waitForFlow("split", { timeoutMs: 60_000 });
    assert.ok(failed);
    console.log(`plain Stream batches sent: ${batches}`);
    assert.deepEqual(await storedWords(store, "split"), [[1, "half \ud83d"]]);
  } finally {
    await worker.close();
  }
});

// A tool Step that heartbeats before its side effect; it does not catch the heartbeat's failure.
let heartbeatThrew: unknown;
const StrictBeat = defineStep<Record<string, never>>("StrictBeat", {
  execute: async (context) => {
    await context.writeStream(Progress, "tool_call_started");
    try {
      await context.heartbeat();
    } catch (error) {
      heartbeatThrew = error;
      throw error;
    }
    return completeFlow({});
  },
});
const strictFlow = defineFlow({ type: "StrictBeating", start: "StrictBeat", steps: [StrictBeat], persistence: { progress: Progress } });

void test("PostgreSQL without migration 0020: a failed Stream batch does not fail the heartbeat", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  // As on a schema before 0020 (hasMigration false at open).
  (store.oneRequest as unknown as { streamsInCommits: boolean }).streamsInCommits = false;
  const operations = store.oneRequest as unknown as { appendStreams: (batch: readonly StreamAppend[]) => Promise<number[]> };
  let failed = false;
  const appendStreams = operations.appendStreams.bind(operations);
  operations.appendStreams = async (batch) => {
    if (!failed) {
      failed = true;
      throw new Error("Connection terminated unexpectedly");
    }
    return appendStreams(batch);
  };
  const worker = new Worker({ store, flows: [strictFlow] });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(strictFlow, "strict", {});
    await client.waitForFlow("strict", { timeoutMs: 60_000 }).catch(() => undefined);
    assert.ok(failed);
    assert.equal(heartbeatThrew, undefined, "a best-effort Stream write failed the heartbeat");
  } finally {
    await worker.close();
  }
});


void test("PostgreSQL: the general path's commit takes Stream heads before count rows (no deadlock with plain batches)", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open({ poolSize: 8 });
  const operations = store.oneRequest as unknown as { appendStreams: (batch: readonly StreamAppend[]) => Promise<number[]> };
  const message = (flowId: string, name: string): StreamAppend => ({ flowId, flowType: "T", stream: name, value: "\"x\"", writtenAt: store.clock.now(), capacityBytes: 1_000_000 });
  const gate = (): { open: () => void; wait: Promise<void> } => {
    let open!: () => void;
    const wait = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { open, wait };
  };
  const admin = new pg.Client({ connectionString: temporary.connectionString });
  await admin.connect();
  t.after(() => admin.end());
  const deadlocks = async (): Promise<number> => {
    await sleep(1500);
    return Number((await admin.query<{ deadlocks: string }>("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0]?.deadlocks);
  };
  const deadlocksBefore = await deadlocks();
  const xFirst = gate();
  const yFirst = gate();
  const goOn = gate();
  // As commitAttempt's general path appends a failed attempt's last messages [A, B] of Flow X (and [B, D] of Flow Y),
  // each transaction holding its Flow's rows while sibling executions of X and Y stream.
  const generalX = store.transaction(async (transaction) => {
    await transaction.lockFlow("X");
    xFirst.open();
    await goOn.wait;
    assert.ok(transaction.appendStreams !== undefined, "the schema has migration 0021's batch");
    await transaction.appendStreams([message("X", "A"), message("X", "B")]);
  });
  const generalY = store.transaction(async (transaction) => {
    await transaction.lockFlow("Y");
    yFirst.open();
    await goOn.wait;
    await transaction.appendStreams!([message("Y", "B"), message("Y", "D")]);
  });
  await xFirst.wait;
  await yFirst.wait;
  // Sibling executions of X and Y stream meanwhile (plain batches: every head first, then the count rows).
  const plainX = operations.appendStreams([message("X", "B")]);
  const plainY = operations.appendStreams([message("Y", "A"), message("Y", "D")]);
  await sleep(200);
  goOn.open();
  const outcomes = await Promise.allSettled([generalX, generalY, plainX, plainY]);
  assert.deepEqual(outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => String((outcome as PromiseRejectedResult).reason)), []);
  assert.equal((await deadlocks()) - deadlocksBefore, 0, "deadlocks the server detected (and the store retried)");
});

const Last = defineStep<Record<string, never>>("Last", {
  execute: async (context) => {
    await context.writeStream(Progress, "last words");
    return completeFlow({});
  },
});
const lastFlow = defineFlow({ type: "Lasting", start: "Last", steps: [Last], persistence: { progress: Progress } });

void test("PostgreSQL without migration 0020: a last batch whose answer is lost is not sent again with each commit retry", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  (store.oneRequest as unknown as { streamsInCommits: boolean }).streamsInCommits = false;
  const operations = store.oneRequest as unknown as { appendStreams: (batch: readonly StreamAppend[]) => Promise<number[]> };
  const appendStreams = operations.appendStreams.bind(operations);
  let lost = false;
  operations.appendStreams = async (batch) => {
    const indexes = await appendStreams(batch);
    if (!lost) {
      lost = true;
      // It landed; its answer did not come back.
      throw new Error("Connection terminated unexpectedly");
    }
    return indexes;
  };
  const worker = new Worker({ store, flows: [lastFlow], onError: () => undefined });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(lastFlow, "last", {});
    await client.waitForFlow("last", { timeoutMs: 60_000 });
    assert.deepEqual(await storedWords(store, "last"), [[1, "last words"]]);
  } finally {
    await worker.close();
  }
});

const Failing = defineStep<Record<string, never>>("Failing", {
  executeOptions: { retry: { initialIntervalMs: 10, backoffCoefficient: 1, maximumIntervalMs: 10, maximumAttempts: 1 } },
  execute: async (context) => {
    for (let index = 0; index < 50; index += 1) await context.writeStream(Progress, `delta ${index}`);
    throw new Error("the model call failed");
  },
});
const failingFlow = defineFlow({ type: "Failing", start: "Failing", steps: [Failing], persistence: { progress: Progress } });

void test("PostgreSQL: a failed attempt's last window costs one Stream statement, not three per message inside its commit", { skip, timeout: 120_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  let streamStatements = 0;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- restored as it was, and called with its own `this`
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === "string" ? first : first?.text ?? "";
    if (/stream_heads|stream_usage|perdure_append_streams/.test(text)) streamStatements += 1;
    return (query as (...parameters: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  t.after(() => {
    pg.Client.prototype.query = query;
  });
  const worker = new Worker({ store, flows: [failingFlow], onError: () => undefined });
  await worker.start();
  try {
    const client = new Client({ store });
    await client.start(failingFlow, "failing", {});
    await client.waitForFlow("failing", { timeoutMs: 60_000 }).catch(() => undefined);
    assert.equal((await storedWords(store, "failing")).length, 50);
    assert.ok(streamStatements <= 2, `Stream statements: ${streamStatements}`);
  } finally {
    await worker.close();
  }
});

void test("PostgreSQL: a commit's JSON carries values with escaped U+0000 and lone surrogates as they are", { skip, timeout: 120_000 }, async (t) => {
  const { startAndClaim } = await import("../testing/one-request-fixtures/chain-commit.ts");
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest!;
  const commit = await startAndClaim(store, operations, "escaped");
  const values = [JSON.stringify("half \ud83d"), JSON.stringify("nul \u0000 here"), JSON.stringify("pair \ud83d\ude00")];
  const streams = values.map((value): StreamAppend => ({ flowId: "escaped", flowType: "OneRequestChain", stream: "Log", value, writtenAt: store.clock.now(), capacityBytes: 10_000 }));
  const reply = await operations.commitStep({ ...commit, movements: [], claim: undefined, streams });
  assert.equal(reply.outcome, "committed");
  const read = await store.transaction((transaction) => transaction.readStream("escaped", "Log", 0, 10));
  assert.deepEqual(read.rows.map((row) => row.value), values);
});
