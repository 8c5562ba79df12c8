/**
 * A PostgreSQL Worker keeps claiming what it can run (found by a review):
 * - a failed claim puts its claims in doubt, and the check that ends the
 *   doubt reads the store's commit position; a store that does not give it
 *   (a server that refuses the query) must not stop the Worker for good;
 * - a wake-up that arrives while a commit's claim holds the free slot finds
 *   no slot; the slot is free again once the commit settled, and the task
 *   the wake-up announced must be claimed then, not at the next poll;
 * - a lock name the store's JSON cannot hold (a map key with U+0000 or a
 *   lone surrogate) must not make the store refuse every claim of the
 *   Worker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeMap } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { RpcLockConflictError } from "../errors/rpc-lock-conflict-error.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { rpc } from "../rpc/rpc.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "./worker.ts";

const skip = postgresTestSkip(testDatabaseUrl());

function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const only = defineFlow({ type: "ClaimLivenessOnly", start: "Only", steps: [defineStep("Only", { execute: () => completeFlow("done") })] });

void test("after a failed claim, a Worker whose store does not give its commit position checks its attempts and claims again", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);
  const claimTasks = operations.claimTasks.bind(operations);
  let failures = 0;
  operations.claimTasks = (claim) => (failures++ === 0 ? Promise.reject(new Error("Connection terminated unexpectedly")) : claimTasks(claim));
  Object.assign(store, { commitPosition: () => Promise.reject(new Error("permission denied for function pg_current_wal_lsn")) });
  const worker = new Worker({ store, flows: [only], pollIntervalMs: 100, onError: () => undefined });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });
  for (const flowId of ["first", "second"]) {
    await client.start(only, flowId);
    assert.equal((await client.waitForFlow(flowId, { timeoutMs: 60_000 })).status, "completed", flowId);
  }
  assert.ok(failures > 1, "the failed claim was followed by others");
});

void test("a task announced while a commit's claim holds the free slot is claimed once the commit settles, without waiting for the poll", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const otherProcess = await temporary.open();
  t.after(() => otherProcess.close());
  const waiting = gate();
  const started: string[] = [];
  const chain = defineFlow({
    type: "ClaimLivenessChain",
    start: "First",
    steps: [
      defineStep("First", { execute: () => moveTo("Second") }),
      defineStep("Second", {
        execute: async () => {
          await waiting.opened;
          return completeFlow();
        },
      }),
    ],
  });
  const announced = defineFlow({
    type: "ClaimLivenessAnnounced",
    start: "Run",
    steps: [defineStep("Run", {
      execute: (context) => {
        started.push(context.flowId);
        return completeFlow();
      },
    })],
  });
  // First's commit (which claims Second) lands, and its reply is held until the other task's wake-up has arrived.
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);
  const commitStep = operations.commitStep.bind(operations);
  const committed = gate();
  const reply = gate();
  operations.commitStep = async (plan) => {
    const result = await commitStep(plan);
    if (plan.flowId === "chain") {
      committed.open();
      await reply.opened;
    }
    return result;
  };
  let taskWakes = 0;
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "tasks") taskWakes += 1;
  });
  t.after(unsubscribe);
  // A poll far longer than the test: only a wake-up can start the other task in time.
  const worker = new Worker({ store, flows: [chain, announced], concurrency: 2, pollIntervalMs: 600_000, onError: () => undefined });
  await worker.start();
  t.after(async () => {
    waiting.open();
    await worker.close();
  });
  const other = new Client({ store: otherProcess });
  await other.start(chain, "chain");
  await committed.opened;
  const wakesBefore = taskWakes;
  await other.start(announced, "announced");
  await pollUntil(() => (taskWakes > wakesBefore ? true : undefined), { description: "the other process's wake-up to reach the Worker" });
  // The loop's pass on that wake-up finds both slots taken (one running, one held by the commit's claim).
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(started, []);
  reply.open();
  await pollUntil(() => (started.length > 0 ? true : undefined), { timeoutMs: 120_000, description: "the announced task to start in the slot the commit left free" });
  assert.deepEqual(started, ["announced"]);
});

void test("Steps that lock map instances whose keys hold U+0000, U+0001 or a lone surrogate run holding them, and the Worker's other Flows run too", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const orders = attributeMap<string>("Orders");
  const [nul, lone, escape] = ["nul\u0000key", "lone\uD800key", "escape\u0001key"] as const;
  const escaped = { holding: gate(), release: gate() };
  const refused = { holding: gate(), release: gate() };
  const locking = defineFlow({
    type: "ClaimLivenessLocking",
    start: "Start",
    persistence: { orders },
    rpcs: {
      touchNul: rpc({ name: "touchNul", locks: [orders.instance(nul)], handler: () => null }),
      touchLone: rpc({ name: "touchLone", locks: [orders.instance(lone)], handler: () => null }),
      touchEscape: rpc({ name: "touchEscape", locks: [orders.instance(escape)], handler: () => null }),
    },
    steps: [
      defineStep("Start", { execute: () => moveTo("Escaped") }),
      // Its lock name the store's JSON holds: claimed through the claim catalog.
      defineStep("Escaped", {
        executeOptions: { locks: [orders.instance(escape)] },
        execute: async () => {
          escaped.holding.open();
          await escaped.release.opened;
          return moveTo("Refused");
        },
      }),
      // Its lock names the store's JSON refuses: claimed by the general claim.
      defineStep("Refused", {
        executeOptions: { locks: [orders.instance(nul), orders.instance(lone)] },
        execute: async () => {
          refused.holding.open();
          await refused.release.opened;
          return completeFlow("locked");
        },
      }),
    ],
  });
  const errors: unknown[] = [];
  const worker = new Worker({ store, flows: [locking, only], pollIntervalMs: 100, onError: (error) => errors.push(error) });
  await worker.start();
  t.after(async () => {
    escaped.release.open();
    refused.release.open();
    await worker.close();
  });
  const client = new Client({ store });
  await client.start(locking, "locking");
  await client.start(only, "plain");
  assert.equal((await client.waitForFlow("plain", { timeoutMs: 60_000 })).status, "completed");
  // Each lock is held under the same name whichever path took it: an RPC that needs one is refused.
  const refusedWhileHeld = (error: unknown): boolean => RpcLockConflictError.isInstance(error);
  await escaped.holding.opened;
  await assert.rejects(client.invokeRPC(locking.touchEscape, "locking"), refusedWhileHeld, "the lock of the key with U+0001");
  escaped.release.open();
  await refused.holding.opened;
  await assert.rejects(client.invokeRPC(locking.touchNul, "locking"), refusedWhileHeld, "the lock of the key with U+0000");
  await assert.rejects(client.invokeRPC(locking.touchLone, "locking"), refusedWhileHeld, "the lock of the key with a lone surrogate");
  refused.release.open();
  assert.equal((await client.waitForFlow("locking", { timeoutMs: 60_000 })).status, "completed");
  assert.deepEqual(errors, []);
});

void test("a Worker closed while it starts leaves no liveness and no maintenance behind", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  // Maintenance ticks every 100 ms at this liveness timeout.
  const worker = new Worker({ store, flows: [only], pollIntervalMs: 100, livenessTimeoutMs: 500 });
  const started = worker.start();
  const closed = worker.close();
  await started;
  assert.deepEqual(await closed, { released: 0 });
  // Several maintenance ticks' time: a tick that outlived the close would write the Worker's liveness again.
  await new Promise((resolve) => setTimeout(resolve, 600));
  const { workers } = await temporary.rows({ workers: "SELECT worker_id FROM workers" });
  assert.deepEqual(workers, [], "the closed Worker left its liveness behind");
});
