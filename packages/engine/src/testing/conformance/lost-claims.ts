import assert from "node:assert/strict";
import { it } from "node:test";
import { attribute } from "../../attribute/attribute.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, deadEnd, moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import type { ExecutionRow, HistoryRow } from "../../store/store.ts";
import { claimTasks } from "../../worker/claim-tasks.ts";
import { FaultInjectingStore } from "../fault-injecting-store.ts";
import { pollUntil } from "../poll-until.ts";
import type { StoreFaultPoint } from "../store-fault.ts";
import { startEnvironment, type StoreConformanceOptions } from "./harness.ts";

/** The transaction leased a task to `workerId`. */
function claimsFor(point: StoreFaultPoint, workerId: string): boolean {
  return point.calls.some((call) => call.method === "updateExecution" && (call.args[2] as Partial<ExecutionRow>).claimedBy === workerId);
}

/** The transaction committed a Step method (it recorded a completed history entry). */
function commitsAStep(point: StoreFaultPoint): boolean {
  return point.calls.some((call) => call.method === "appendHistory" && (call.args[0] as HistoryRow).status === "completed");
}

const lostReplies = [
  { name: "a commit that claims the next Step", matches: (point: StoreFaultPoint, workerId: string) => commitsAStep(point) && claimsFor(point, workerId) },
  { name: "a claim of the Worker loop", matches: (point: StoreFaultPoint, workerId: string) => !commitsAStep(point) && claimsFor(point, workerId) },
];

export function lostClaimTests(options: StoreConformanceOptions): void {
  for (const lostReply of lostReplies) {
    it(`a Worker runs, once and under the lost lease, the task that ${lostReply.name} leased to it when the reply was lost`, async () => {
      const runs = attribute<string[]>("Runs");
      // Default method timeouts: a lost claim left alone would wait 10 minutes.
      const First = defineStep<null>("First", {
        execute: (context) => {
          context.write(runs, [`First ${context.attempt}`]);
          return moveTo("Second", null);
        },
      });
      const Second = defineStep<null>("Second", {
        execute: (context) => {
          context.write(runs, [...context.read(runs) ?? [], `Second ${context.attempt}`]);
          return completeFlow("done");
        },
      });
      const flow = defineFlow({ type: "LostClaims", start: "First", steps: [First, Second], persistence: { runs } });
      const environment = await startEnvironment(options, [flow], false);
      const workerId = "lost-claims-worker";
      let struck = false;
      const faulty = new FaultInjectingStore(environment.store, {
        transactionFaultRate: 0,
        chooseFault: (point) => {
          if (struck || point.stage !== "commit" || !lostReply.matches(point, workerId)) return undefined;
          struck = true;
          return "commit-outcome-unknown";
        },
      });
      try {
        await environment.startWorker({ store: faulty, workerId });
        await environment.client.start(flow, "lost-claim-1");
        await environment.waitForStatus("lost-claim-1", "completed");
        assert.equal(faulty.injected["commit-outcome-unknown"], 1);
        assert.deepEqual(await environment.client.getAttributes("lost-claim-1", runs), [["First 1", "Second 1"]]);
        const history = await environment.client.getStepHistory("lost-claim-1");
        assert.deepEqual(history.map((entry) => [entry.stepType, entry.status, entry.attempt]), [["First", "completed", 1], ["Second", "completed", 1]]);
      } finally {
        await environment.dispose();
      }
    });
  }

  it("a Worker never adopts a task that another live Worker's claim leased", async () => {
    const ran = attribute<string>("Ran");
    const Work = defineStep("Work", {
      execute: (context) => {
        context.write(ran, "yes");
        return deadEnd();
      },
    });
    const Other = defineStep("Other", { execute: () => completeFlow() });
    const flow = defineFlow({ type: "ForeignLease", start: "Work", steps: [Work, Other], persistence: { ran } });
    const environment = await startEnvironment(options, [flow], false);
    try {
      await environment.client.start(flow, "foreign-1");
      // Another Worker, alive for the whole test, holds the lease and never runs the attempt.
      await environment.store.transaction((transaction) => transaction.touchWorker("other-worker", Date.now() + 600_000));
      const claimed = await claimTasks(environment.store, new Map([[flow.flowType, flow]]), "other-worker", 1);
      assert.equal(claimed.claims.length, 1);
      const workerId = "adopting-worker";
      let struck = false;
      // This Worker's first claim is lost, so it looks for claims it did not see.
      const faulty = new FaultInjectingStore(environment.store, {
        transactionFaultRate: 0,
        chooseFault: (point) => {
          if (struck || point.stage !== "commit" || point.calls.every((call) => call.method !== "findClaimable")) return undefined;
          struck = true;
          return "commit-outcome-unknown";
        },
      });
      await environment.startWorker({ store: faulty, workerId });
      await pollUntil(() => struck, { description: "the lost claim reply" });
      await environment.client.start(flow, "foreign-2", null);
      await pollUntil(async () => (await environment.client.getAttributes("foreign-2", ran))[0] === "yes", { timeoutMs: 10_000, description: "the adopting Worker to claim again" });
      assert.deepEqual(await environment.client.getAttributes("foreign-1", ran), [undefined]);
      const [row] = await environment.store.transaction((transaction) => transaction.findClaimedBy("other-worker", 10));
      assert.equal(row?.leaseToken, claimed.claims[0]?.execution.leaseToken);
    } finally {
      await environment.dispose();
    }
  });

  it("findClaimedBy lists exactly the executions leased to a Worker", async () => {
    const Work = defineStep("Work", { execute: () => deadEnd() });
    const flow = defineFlow({ type: "LeaseOwners", start: "Work", steps: [Work] });
    const environment = await startEnvironment(options, [flow], false);
    try {
      const flows = new Map([[flow.flowType, flow]]);
      for (const flowId of ["owned-1", "owned-2", "owned-3"]) await environment.client.start(flow, flowId);
      await claimTasks(environment.store, flows, "worker-a", 2);
      await claimTasks(environment.store, flows, "worker-b", 1);
      const leasedTo = async (workerId: string, limit = 10) =>
        (await environment.store.transaction((transaction) => transaction.findClaimedBy(workerId, limit))).map((row) => row.flowId).sort();
      const [ofA, ofB] = [await leasedTo("worker-a"), await leasedTo("worker-b")];
      assert.equal(ofA.length, 2);
      assert.equal(ofB.length, 1);
      assert.deepEqual([...ofA, ...ofB].sort(), ["owned-1", "owned-2", "owned-3"]);
      assert.deepEqual(await leasedTo("worker-c"), []);
      assert.equal((await leasedTo("worker-a", 1)).length, 1);
    } finally {
      await environment.dispose();
    }
  });
}
