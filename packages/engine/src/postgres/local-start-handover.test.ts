import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { FlowStart, FlowStartReply, OneRequestOperations } from "../store/step-commit.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

/** A Flow whose one Step records which Worker ran it and blocks until `release` is called. */
function gatedFlow(type: string) {
  const ranBy: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const flow = defineFlow({
    type,
    start: "Work",
    steps: [defineStep("Work", {
      execute: async (context) => {
        ranBy.push(context.flowId);
        await gate;
        return completeFlow({ done: context.flowId });
      },
    })],
  });
  return { flow, ranBy, release: () => release() };
}

/** Counts the store's one-request claims (each a claim function call of a Worker's loop: `perdure_claim_compact` since migration 0023). */
function countClaims(oneRequest: OneRequestOperations): { claims: () => number } {
  let claims = 0;
  const claimTasks = oneRequest.claimTasks.bind(oneRequest);
  oneRequest.claimTasks = async (claim) => {
    const reply = await claimTasks(claim);
    claims += reply.claims.length;
    return reply;
  };
  return { claims: () => claims };
}

void test("a Flow started where a Worker hosts it, with a slot free, is leased to that Worker by the start itself and runs without a claim", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  assert.ok(store.oneRequest !== undefined);
  const counted = countClaims(store.oneRequest);
  const { flow, ranBy, release } = gatedFlow("HandedOff");
  const worker = new Worker({ store, flows: [flow], concurrency: 2 });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });

  await client.start(flow, "handed-off-1", {});
  // The start's reply launched the attempt before the call returned: no wake-up reached the Worker's loop first.
  assert.equal(worker.activeCount, 1);
  assert.deepEqual((await client.describe("handed-off-1")).executions, [{ executionId: "1", stepType: "Work", status: "running" }]);
  await client.start(flow, "handed-off-2", {});
  assert.equal(worker.activeCount, 2);

  // Both slots are taken: the third start queues its task, and the Worker claims it once a slot frees.
  await client.start(flow, "queued-3", {});
  assert.deepEqual((await client.describe("queued-3")).executions, [{ executionId: "1", stepType: "Work", status: "ready" }]);
  assert.equal(counted.claims(), 0);
  release();
  for (const flowId of ["handed-off-1", "handed-off-2", "queued-3"]) {
    const description = await client.waitForFlow(flowId, { timeoutMs: 60_000 });
    assert.equal(description.status, "completed");
    assert.deepEqual(description.output, { done: flowId });
  }
  assert.deepEqual(ranBy, ["handed-off-1", "handed-off-2", "queued-3"]);
  const history = await client.getStepHistory("handed-off-1");
  assert.deepEqual(history.map((entry) => [entry.stepType, entry.attempt, entry.status]), [["Work", 1, "completed"]]);
  await worker.close();
});

void test("no handover to a Worker with another definition of the Flow type, or to a closed one; a start that created nothing gives its slot back", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const client = new Client({ store });
  const hosted = gatedFlow("Definitions");
  const other = gatedFlow("Definitions");
  hosted.release();
  const worker = new Worker({ store, flows: [hosted.flow], concurrency: 2 });
  await worker.start();
  t.after(() => worker.close());

  // The same type from another definition is queued; the Worker's loop claims it and runs its own definition.
  await client.start(other.flow, "other-definition", {});
  assert.equal((await client.waitForFlow("other-definition", { timeoutMs: 60_000 })).status, "completed");
  assert.deepEqual([hosted.ranBy, other.ranBy], [["other-definition"], []]);

  // A duplicate start holds a slot while its request is out, creates nothing, and gives the slot back.
  const slots = gatedFlow("Slots");
  const slotWorker = new Worker({ store, flows: [slots.flow], concurrency: 2 });
  await slotWorker.start();
  t.after(() => slotWorker.close());
  await client.start(slots.flow, "first", {}, { requestId: "request-1" });
  assert.equal(slotWorker.activeCount, 1);
  assert.deepEqual(await client.start(slots.flow, "first", {}, { requestId: "request-1" }), { created: false });
  await client.start(slots.flow, "second", {});
  assert.equal(slotWorker.activeCount, 2, "the second start found the slot the duplicate gave back");
  slots.release();
  for (const flowId of ["first", "second"]) assert.equal((await client.waitForFlow(flowId, { timeoutMs: 60_000 })).status, "completed");
  await slotWorker.close();

  // A closed Worker offers no slots: the start queues its task.
  await worker.close();
  await client.start(hosted.flow, "after-close", {});
  assert.deepEqual((await client.describe("after-close")).executions, [{ executionId: "1", stepType: "Work", status: "ready" }]);
});

void test("a start whose reply is lost after it committed still runs: the Worker puts its claims in doubt and adopts the leased start Step", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const oneRequest = store.oneRequest;
  assert.ok(oneRequest !== undefined);
  const { flow, ranBy, release } = gatedFlow("LostReply");
  release();
  const worker = new Worker({ store, flows: [flow], concurrency: 2 });
  await worker.start();
  t.after(() => worker.close());
  const startFlow = oneRequest.startFlow.bind(oneRequest);
  let leasedInStart = false;
  oneRequest.startFlow = async (start: FlowStart): Promise<FlowStartReply> => {
    await startFlow(start);
    leasedInStart = start.startExecution?.claimedBy === worker.workerId;
    throw new Error("connection lost after COMMIT");
  };
  const client = new Client({ store });

  await assert.rejects(client.start(flow, "lost-reply", {}), /connection lost after COMMIT/);
  assert.ok(leasedInStart, "the start leased its Step to the Worker");
  oneRequest.startFlow = startFlow;
  const description = await client.waitForFlow("lost-reply", { timeoutMs: 60_000 });
  assert.equal(description.status, "completed");
  assert.deepEqual(ranBy, ["lost-reply"]);
  const history = await client.getStepHistory("lost-reply");
  assert.deepEqual(history.map((entry) => entry.attempt), [1], "the adopted attempt is the start's own lease, not a recovery");
  await worker.close();
});

void test("waitForFlow in the process whose Worker ended the Flow gets the ended Flow from the commit, without reading it again", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const oneRequest = store.oneRequest;
  assert.ok(oneRequest !== undefined);
  const { flow, release } = gatedFlow("EndedHere");
  const worker = new Worker({ store, flows: [flow] });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });
  const readFlow = oneRequest.readFlow.bind(oneRequest);
  let reads = 0;
  let readsDone = 0;
  oneRequest.readFlow = async (flowId) => {
    reads += 1;
    try {
      return await readFlow(flowId);
    } finally {
      readsDone += 1;
    }
  };

  await client.start(flow, "ended-here", { order: 7 });
  const waiting = client.waitForFlow("ended-here", { timeoutMs: 60_000 });
  await pollUntil(() => readsDone === 1);
  release();
  const ended = await waiting;
  assert.equal(reads, 1, "only the wait's first look read the Flow");
  oneRequest.readFlow = readFlow;
  // What the commit handed over is what a read finds.
  const read = await client.describe("ended-here");
  assert.deepEqual(ended, read);
  assert.deepEqual([ended.status, ended.input, ended.output, ended.executions], ["completed", { order: 7 }, { done: "ended-here" }, []]);
  await worker.close();
});
