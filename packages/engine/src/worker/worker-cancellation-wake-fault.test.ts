/**
 * An `executions_cancelled` wake-up checks the running attempts at once.
 * When that check's store transaction fails (any transient store fault),
 * the failure is reported like the maintenance pass's, not left as an
 * unhandled rejection that ends the Worker's process. Found by the review
 * (rev1) as a crash of the simulation runner.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { deadEnd } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { StoreTransaction } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

let release: () => void = () => undefined;
const released = new Promise<void>((resolve) => { release = resolve; });
let running = false;
const flow = defineFlow({
  type: "CancelWakeFault",
  start: "Long",
  steps: [defineStep("Long", {
    execute: async () => {
      running = true;
      await released;
      return deadEnd();
    },
  })],
});

void test("a store fault in the cancellation check an executions_cancelled wake-up starts is not an unhandled rejection", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const store = temporary.store;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
  process.on("unhandledRejection", onUnhandled);
  t.after(() => process.off("unhandledRejection", onUnhandled));

  let failNext = false;
  const transaction = store.transaction.bind(store);
  store.transaction = (<T>(body: (transaction: StoreTransaction) => Promise<T>): Promise<T> => {
    if (failNext) {
      failNext = false;
      return Promise.reject(Object.assign(new Error("disk I/O error"), { code: "ERR_SQLITE_ERROR" }));
    }
    return transaction(body);
  }) as typeof store.transaction;

  const reported: string[] = [];
  const worker = new Worker({ store, flows: [flow], onError: (error) => reported.push(String((error as Error).message)) });
  await worker.start();
  await new Client({ store }).start(flow, "f1", {});
  await pollUntil(() => running, { timeoutMs: 10_000, description: "the attempt to run" });
  failNext = true;
  store.wake({ kind: "executions_cancelled", flowId: "f1" });
  await pollUntil(() => reported.includes("disk I/O error") || unhandled.length > 0, { timeoutMs: 10_000, description: "the failed check to be reported" }).catch(() => undefined);
  release();
  await worker.close();
  assert.deepEqual(unhandled.map((reason) => String((reason as Error).message)), [], "the failed check's rejection was unhandled (Node would end the process)");
  assert.ok(reported.includes("disk I/O error"), `the failed check was not reported to onError (reported: ${reported.join("; ") || "nothing"})`);
});
