import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { chainFlow, startAndClaim } from "../testing/one-request-fixtures/chain-commit.ts";
import { runMixedFlows } from "../testing/one-request-fixtures/mixed-flow.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "../worker/worker.ts";
import { PreparedStatement } from "./prepared-statement.ts";
import { SqliteOneRequest } from "./sqlite-one-request.ts";

/** The rows of every engine table, ordered, with times and worker IDs left out: what both paths must agree on. */
function tableRows(path: string): Record<string, unknown[]> {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = (sql: string): unknown[] => database.prepare(sql).all().map((row) => ({ ...row }));
    return {
      flows: rows("SELECT flow_id, flow_type, status, input, output, error, request_id, next_seq FROM flows ORDER BY flow_id"),
      executions: rows("SELECT flow_id, execution_id, seq, step_type, input, status, attempt, execute_claims, conditions, wait_result, movement_options FROM executions ORDER BY flow_id, seq"),
      attributes: rows("SELECT flow_id, name, key, value FROM attributes ORDER BY flow_id, name, key"),
      history: rows("SELECT flow_id, seq, execution_id, step_type, method, status, attempt, outcome, error FROM history ORDER BY flow_id, seq"),
      locks: rows("SELECT * FROM locks ORDER BY flow_id, name"),
      timers: rows("SELECT flow_id, execution_id, timer_id, fired FROM timers ORDER BY flow_id, execution_id, timer_id"),
      // How many messages each Flow wrote to each Stream. Which ones the shared budget kept depends on how
      // the Flows' attempts interleave, which SQLite's local handover leaves to timing.
      streamHeads: rows("SELECT * FROM stream_heads ORDER BY flow_id, stream"),
    };
  } finally {
    database.close();
  }
}

void test("Step commits, claims and starts as one-request operations leave exactly the rows the transactional path leaves", { timeout: 300_000 }, async (t) => {
  const general = createTemporarySqliteStore();
  t.after(() => general.dispose());
  const oneRequest = createTemporarySqliteStore();
  t.after(() => oneRequest.dispose());
  general.store.oneRequest = undefined;
  let commits = 0;
  const operations = oneRequest.store.oneRequest;
  assert.ok(operations !== undefined, "a SQLite store offers the one-request operations");
  const commitStep = operations.commitStep.bind(operations);
  operations.commitStep = (commit) => {
    commits += 1;
    return commitStep(commit);
  };

  // SQLite's one-request commit takes no waits or publishes (they fall back), and the waits Flow's
  // Listen may run before or after Gather ends the Flow under SQLite's handover, by timing alone.
  await runMixedFlows(general.store, { waits: false });
  await runMixedFlows(oneRequest.store, { waits: false });
  const generalRows = tableRows(general.path);
  assert.ok(generalRows["history"]!.length > 80, "the scenario committed the Steps it was meant to");
  assert.ok(commits > 70, `the one-request commit ran ${commits} times`);
  assert.equal(generalRows["streamHeads"]!.length, 6, "every Flow wrote its two Streams");
  assert.deepEqual(tableRows(oneRequest.path), generalRows);
});

/** One-request operations over a connection of their own that records each statement's SQL. */
function spiedOperations(path: string): { operations: SqliteOneRequest; ran: string[]; close: () => void } {
  const database = new DatabaseSync(path);
  const ran: string[] = [];
  const operations = new SqliteOneRequest({
    statement: (sql) => {
      ran.push(sql);
      return new PreparedStatement(database.prepare(sql));
    },
    runAtomically: async (operation) => {
      database.exec("BEGIN IMMEDIATE");
      try {
        const value = operation();
        database.exec("COMMIT");
        return value;
      } catch (error) {
        database.exec("ROLLBACK");
        throw error;
      }
    },
    wake: () => undefined,
  });
  return { operations, ran, close: () => database.close() };
}

const isClaimScan = (sql: string): boolean => sql.includes("json_group_array");

void test("a commit hands its one new Step to the committing Worker without a claim scan only when no older task waits, and otherwise claims the oldest", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const { operations, ran, close } = spiedOperations(temporary.path);
  t.after(close);

  const alone = await startAndClaim(temporary.store, operations, "alone");
  ran.length = 0;
  const handed = await operations.commitStep(alone);
  assert.equal(ran.filter(isClaimScan).length, 0, "the handover needs no claim scan");
  assert.equal(handed.outcome, "committed");
  assert.deepEqual(handed.claims.map((claim) => [claim.execution.flowId, claim.execution.executionId, claim.execution.claimedBy, claim.execution.attempt]), [["alone", "2", "worker-a", 1]]);

  // Another Flow's start waits in line: the claim takes it, the older task, and the new Step queues.
  const waiting = await startAndClaim(temporary.store, operations, "waiting");
  await new Client({ store: temporary.store }).start(chainFlow, "queued-first", { remaining: 1 });
  // The new Step queues strictly after that start (a fresh task, not a continuation of an older chain).
  await new Promise((resolve) => setTimeout(resolve, 3));
  const later = temporary.store.clock.now();
  const movements = waiting.movements.map((movement) => ({ ...movement, availableAt: later, scheduledAt: later, createdAt: later }));
  ran.length = 0;
  const claimedOldest = await operations.commitStep({ ...waiting, now: later, movements });
  assert.equal(ran.filter(isClaimScan).length, 1, "a task in line makes the commit scan for the oldest");
  assert.deepEqual(claimedOldest.claims.map((claim) => claim.execution.flowId), ["queued-first"]);
  const read = await operations.readFlow("waiting");
  assert.deepEqual(read?.executions.map((execution) => [execution.executionId, execution.claimedBy]), [["2", null]], "the new Step is queued, not leased");

  // A second commit with the same lease is fenced off and writes nothing.
  const fenced = await operations.commitStep({ ...alone, claim: undefined });
  assert.equal(fenced.outcome, "fenced");
  assert.equal((await operations.readFlow("alone"))?.flow.nextSeq, 4);
});

void test("a Worker on SQLite runs a chain through one-request commits, and its starts through the local handover", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const operations = temporary.store.oneRequest!;
  const counts = { commits: 0, claimedByClaims: 0, starts: 0 };
  const { commitStep, claimTasks, startFlow } = { commitStep: operations.commitStep.bind(operations), claimTasks: operations.claimTasks.bind(operations), startFlow: operations.startFlow.bind(operations) };
  operations.commitStep = (commit) => {
    counts.commits += 1;
    return commitStep(commit);
  };
  // An idle Worker polls with claims now and then: count what they took, not the calls.
  operations.claimTasks = async (claim) => {
    const reply = await claimTasks(claim);
    counts.claimedByClaims += reply.claims.length;
    return reply;
  };
  operations.startFlow = (start) => {
    counts.starts += 1;
    return startFlow(start);
  };
  // As many callers as slots, each starting its next chain as soon as the last ended: every commit
  // must count the slots that the commits settled with it, and the starts they let in, as they are.
  const worker = new Worker({ store: temporary.store, flows: [chainFlow], concurrency: 32 });
  await worker.start();
  const client = new Client({ store: temporary.store });
  const callers = Array.from({ length: 32 }, (_, caller) => [1, 2, 3].map((round) => `local-${caller}-${round}`));
  const flowIds = callers.flat();
  const ended: Awaited<ReturnType<Client["waitForFlow"]>>[] = [];
  try {
    await Promise.all(callers.map(async (ids) => {
      for (const flowId of ids) {
        await client.start(chainFlow, flowId, { remaining: 20 });
        ended.push(await client.waitForFlow(flowId, { timeoutMs: 30_000 }));
      }
    }));
  } finally {
    await worker.close();
  }
  assert.deepEqual(ended.map((description) => [description.status, description.output]), flowIds.map(() => ["completed", { done: true }]));
  assert.equal(counts.starts, flowIds.length);
  assert.equal(counts.commits, flowIds.length * 21, "each of the 21 Steps of each chain committed in one request");
  assert.equal(counts.claimedByClaims, 0, "the starts and every next Step were handed to the Worker, with no claim of their own");
  for (const flowId of flowIds) {
    const history = await client.getStepHistory(flowId);
    assert.equal(history.length, 21);
    assert.ok(history.every((entry) => entry.attempt === 1 && entry.status === "completed"));
  }
});

void test("a task queued after the place of a commit's new Step does not stop the handover: the claim would take the new Step first", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const { operations, ran, close } = spiedOperations(temporary.path);
  t.after(close);

  // The new Step continues the chain, so it keeps the place of the start it follows.
  const continuing = await startAndClaim(temporary.store, operations, "continuing");
  await new Client({ store: temporary.store }).start(chainFlow, "queued-after", { remaining: 1 });
  ran.length = 0;
  const handed = await operations.commitStep({ ...continuing, now: temporary.store.clock.now() });
  assert.equal(ran.filter(isClaimScan).length, 0, "no claim scan");
  assert.deepEqual(handed.claims.map((claim) => [claim.execution.flowId, claim.execution.executionId, claim.execution.claimedBy]), [["continuing", "2", "worker-a"]]);
  const queued = await operations.readFlow("queued-after");
  assert.deepEqual(queued?.executions.map((execution) => [execution.executionId, execution.claimedBy]), [["1", null]], "the later start still waits");
});

void test("a commit that hands its new Step over with more free slots claims the tasks queued behind it for them, in claim order", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const { operations, close } = spiedOperations(temporary.path);
  t.after(close);

  const continuing = await startAndClaim(temporary.store, operations, "continuing");
  await new Client({ store: temporary.store }).start(chainFlow, "queued-after", { remaining: 1 });
  const claim = continuing.claim!;
  const reply = await operations.commitStep({ ...continuing, now: temporary.store.clock.now(), claim: { ...claim, limit: 3 } });
  assert.deepEqual(reply.claims.map((each) => [each.execution.flowId, each.execution.executionId, each.execution.claimedBy]), [
    ["continuing", "2", "worker-a"],
    ["queued-after", "1", "worker-a"],
  ]);
});
