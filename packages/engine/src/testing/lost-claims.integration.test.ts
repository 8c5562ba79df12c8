import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, completeFlow, defineFlow, defineStep, moveTo, Worker } from "../index.ts";
import type { ExecutionRow, HistoryRow } from "../store/store.ts";
import { FaultInjectingStore } from "./fault-injecting-store.ts";
import { pollUntil } from "./poll-until.ts";
import type { StoreFaultPoint } from "./store-fault.ts";
import { createTemporarySqliteStore } from "./temporary-sqlite-store.ts";

// Default Step options: a lease lost this way lasts the method timeout, 10 minutes.
const First = defineStep<null>("First", { execute: () => moveTo("Second", null) });
const Second = defineStep<null>("Second", { execute: () => completeFlow("done") });
const chainFlow = defineFlow({ type: "LostClaimChain", start: "First", steps: [First, Second] });

/** The transaction leased a task to `workerId`. */
function claimsFor(point: StoreFaultPoint, workerId: string): boolean {
  return point.calls.some((call) => call.method === "updateExecution" && (call.args[2] as Partial<ExecutionRow>).claimedBy === workerId);
}

/** The transaction committed a Step method (it recorded a completed history entry). */
function commitsAStep(point: StoreFaultPoint): boolean {
  return point.calls.some((call) => call.method === "appendHistory" && (call.args[0] as HistoryRow).status === "completed");
}

for (const variant of [
  { name: "the commit of a Step that also claims the next Step", matches: (point: StoreFaultPoint, workerId: string) => commitsAStep(point) && claimsFor(point, workerId) },
  { name: "a claim transaction of the Worker loop", matches: (point: StoreFaultPoint, workerId: string) => !commitsAStep(point) && claimsFor(point, workerId) },
]) {
  void test(`a Flow finishes within seconds when ${variant.name} commits but its reply is lost`, { timeout: 300_000 }, async (t) => {
    const temporary = createTemporarySqliteStore();
    const workerId = "lost-claims-worker";
    let struck = false;
    let struckAt = 0;
    const store = new FaultInjectingStore(temporary.store, {
      transactionFaultRate: 0,
      chooseFault: (point) => {
        if (struck || point.stage !== "commit" || !variant.matches(point, workerId)) return undefined;
        struck = true;
        struckAt = Date.now();
        return "commit-outcome-unknown";
      },
    });
    const errors: unknown[] = [];
    const worker = new Worker({ store, flows: [chainFlow], workerId, onError: (error) => errors.push(error) });
    t.after(async () => {
      await worker.close();
      await temporary.dispose();
    });
    await worker.start();
    const client = new Client({ store: temporary.store });
    await client.start(chainFlow, "chain-1");
    await pollUntil(() => struck, { description: "the lost reply" });
    try {
      await pollUntil(async () => (await client.describe("chain-1")).status === "completed", { timeoutMs: 30_000, intervalMs: 100, description: "the Flow to complete" });
    } catch (error) {
      const description = await client.describe("chain-1");
      assert.fail(`Flow chain-1 is still ${description.status} ${Date.now() - struckAt} ms after the lost reply, with executions ${JSON.stringify(description.executions)}; Worker errors: ${errors.map(String).join("; ")}; ${String(error)}`);
    }
    assert.equal(store.injected["commit-outcome-unknown"], 1);
    // The Worker ran the lost claim under its lease: no attempt failed or ran twice.
    const history = await client.getStepHistory("chain-1");
    assert.deepEqual(history.map((entry) => [entry.stepType, entry.status, entry.attempt]), [["First", "completed", 1], ["Second", "completed", 1]]);
    t.diagnostic(`the Flow completed ${(history.at(-1)?.finishedAt.getTime() ?? Number.NaN) - struckAt} ms after the lost reply`);
  });
}
