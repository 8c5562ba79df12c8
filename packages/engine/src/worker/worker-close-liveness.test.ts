/**
 * A Worker that closes while liveness writes are still in flight waits for
 * them before it removes its liveness. Otherwise, on PostgreSQL a late write
 * commits after the removal: the Worker's row is back, alive for its
 * liveness timeout, and its store counts it as a Worker of its own, so for
 * up to 3 s it keeps Workers' wake-ups at home although it has no Worker
 * left to hear them. Maintenance passes start on a timer whether or not the
 * last one finished, so on a slow store several may be in flight (the
 * second test is the review's probe).
 * docs/decisions/2026-12-07-worker-wakes-stay-home-when-alone.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { listenForWakes } from "../postgres/test-fixtures/wake-listener.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import type { PostgresStore } from "../postgres/runtime/postgres-store.ts";
import { deadEnd } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StoreTransaction } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "./worker.ts";

const skip = postgresTestSkip(testDatabaseUrl());

const oneStep = defineFlow({ type: "CloseLiveness", start: "Only", steps: [defineStep("Only", { execute: () => deadEnd() })] });

/**
 * Once armed, the first liveness write waits at a gate inside its
 * transaction (before its statement, so it holds no row lock) until
 * released; later ones run and are counted. Counts removals once armed.
 */
function holdFirstLivenessWrite(store: PostgresStore) {
  const state = { armed: false, held: false, laterWrites: 0, removeCalled: false };
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  let heldTransactionDone: () => void = () => undefined;
  const heldTransaction = new Promise<void>((resolve) => { heldTransactionDone = resolve; });
  const transaction = store.transaction.bind(store);
  store.transaction = (<T>(body: (transaction: StoreTransaction) => Promise<T>): Promise<T> => {
    let holds = false;
    const done = transaction((inner) => body(new Proxy(inner, {
      get(target, property) {
        if (property === "touchWorker" && state.armed) {
          if (state.held) {
            return async (workerId: string, expiresAt: number) => {
              await target.touchWorker(workerId, expiresAt);
              state.laterWrites += 1;
            };
          }
          state.held = holds = true;
          return async (workerId: string, expiresAt: number) => {
            await gate;
            return target.touchWorker(workerId, expiresAt);
          };
        }
        if (property === "removeWorker" && state.armed) state.removeCalled = true;
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? (value as (...parts: unknown[]) => unknown).bind(target) : value;
      },
    })));
    void done.then(() => holds && heldTransactionDone(), () => holds && heldTransactionDone());
    return done;
  }) as typeof store.transaction;
  return { state, release, heldTransaction };
}

/** Closes `worker` while the held write waits; releases it once close removed the row, or could not get there. */
async function closeDuringHeldWrite(worker: Worker, hold: ReturnType<typeof holdFirstLivenessWrite>): Promise<void> {
  const closed = worker.close();
  // Without the wait, close removes the row while the write is held; with it, close cannot get there until the release.
  await Promise.race([pollUntil(() => hold.state.removeCalled, { timeoutMs: 1000, description: "removeWorker" }).catch(() => undefined), closed]);
  hold.release();
  await closed;
  await hold.heldTransaction;
}

void test("PostgreSQL: a Worker closing during a liveness write leaves no row behind, and its store wakes other processes' Workers again", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const { heard, end } = await listenForWakes(temporary);
  t.after(end);
  const hold = holdFirstLivenessWrite(store);

  const worker = new Worker({ store, flows: [oneStep] });
  await worker.start();
  hold.state.armed = true;
  await pollUntil(() => hold.state.held, { timeoutMs: 10_000, description: "a liveness write to be held" });
  await closeDuringHeldWrite(worker, hold);

  const { rows } = await temporary.rows({ rows: "SELECT worker_id FROM workers" });
  assert.deepEqual(rows, [], "the closed Worker's liveness row was written again after its removal");

  // This store has no Worker now: a task it queues must reach Workers elsewhere.
  await new Client({ store }).start(oneStep, "after-close", {});
  await pollUntil(() => heard.some((entry) => entry.startsWith("tasks")), { timeoutMs: 5_000, description: "a tasks NOTIFY" }).catch(() => undefined);
  assert.ok(heard.some((entry) => entry.startsWith("tasks")), `a store whose Worker closed sent no tasks wake-up (heard: ${heard.join(", ") || "nothing"})`);
});

void test("PostgreSQL: a liveness write of an older maintenance pass, still in flight behind a newer one, does not bring a closed Worker's row back", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  const hold = holdFirstLivenessWrite(store);

  // Passes start every second, so a later one runs while the first is held.
  const worker = new Worker({ store, flows: [oneStep] });
  await worker.start();
  hold.state.armed = true;
  await pollUntil(() => hold.state.held, { timeoutMs: 10_000, description: "a liveness write to be held" });
  await pollUntil(() => hold.state.laterWrites >= 1, { timeoutMs: 10_000, description: "a later pass's liveness write" });
  await closeDuringHeldWrite(worker, hold);

  const { rows } = await temporary.rows({ rows: "SELECT worker_id FROM workers" });
  assert.deepEqual(rows, [], "the closed Worker's liveness row was written again after its removal, by an older maintenance pass");
});
