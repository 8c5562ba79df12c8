/**
 * Checks shared by each store's tests of `claimedAll`: a claim tells
 * whether it took every claimable task there was, and a commit whose claim
 * took every task it queued wakes no Worker.
 */
import assert from "node:assert/strict";
import { attribute } from "../../attribute/attribute.ts";
import { Client } from "../../client/client.ts";
import { defineFlow } from "../../flow/flow.ts";
import { completeFlow, deadEnd, moveToMany, movement } from "../../step/decision.ts";
import { defineStep, type StepDefinition } from "../../step/step.ts";
import type { Store, WakeEvent } from "../../store/store.ts";
import { claimCatalogOf } from "../../worker/one-request-commit.ts";
import { Worker } from "../../worker/worker.ts";
import { pollUntil } from "../poll-until.ts";

const Only = defineStep("Only", { execute: () => completeFlow("done") });
const onlyFlow = defineFlow({ type: "ClaimMore", steps: [Only], start: "Only" });

/** Starts five one-Step Flows and claims them by twos and ones, checking each answer's `claimedAll`. */
export async function checkClaimedAllAnswers(store: Store): Promise<void> {
  const operations = store.oneRequest;
  assert.ok(operations !== undefined);
  const client = new Client({ store });
  for (const id of ["m1", "m2", "m3", "m4", "m5"]) await client.start(onlyFlow, id, {});
  const { flowTypes, catalog } = claimCatalogOf(new Map([[onlyFlow.flowType, onlyFlow]]), operations.claimsLocksAndLoads === true, operations.claimsReadLoads === true);
  const claim = async (limit: number) => {
    const reply = await operations.claimTasks({ workerId: "probe", now: store.clock.now(), claim: { flowTypes, catalog, limit } });
    return { claimed: reply.claims.length, claimedAll: reply.claimedAll };
  };
  assert.deepEqual(await claim(2), { claimed: 2, claimedAll: false }, "three are left");
  assert.deepEqual(await claim(2), { claimed: 2, claimedAll: false }, "one is left");
  assert.deepEqual(await claim(1), { claimed: 1, claimedAll: true }, "the limit took the last one");
  assert.deepEqual(await claim(3), { claimed: 0, claimedAll: true }, "nothing was there");
  // Another Flow type's tasks are not this claim's business.
  const Other = defineStep("Other", { execute: () => completeFlow("other") });
  await client.start(defineFlow({ type: "ClaimMoreOther", steps: [Other], start: "Other" }), "o1", {});
  await client.start(onlyFlow, "m6", {});
  assert.deepEqual(await claim(1), { claimed: 1, claimedAll: true });
}

const note = attribute<string>("Note");

/**
 * Runs a Fan Step that moves to Left and Right on a Worker with two slots,
 * so Fan's commit claims both, its whole limit, with nothing else queued;
 * returns the `tasks` wake-ups raised from Fan's commit on. `general`: Left
 * and Right select a load, which a one-request claim on SQLite leaves to the
 * general path.
 */
export async function tasksWakesAfterFan(store: Store, flowType: string, general = false): Promise<WakeEvent[]> {
  const ran: string[] = [];
  const wakes: WakeEvent[] = [];
  let wakesBeforeFanCommit = -1;
  const Fan = defineStep("Fan", {
    execute: () => {
      wakesBeforeFanCommit = wakes.length;
      return moveToMany([movement("Left"), movement("Right")]);
    },
  });
  const side = (name: string): StepDefinition<unknown> => defineStep(name, {
    ...(general ? { load: [note] } : {}),
    execute: () => {
      ran.push(name);
      return deadEnd();
    },
  });
  const fanFlow = defineFlow({ type: flowType, steps: [Fan, side("Left"), side("Right")], start: "Fan", persistence: { note } });
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "tasks") wakes.push(event);
  });
  const errors: unknown[] = [];
  // It polls once a minute: its loop claims only when woken.
  const worker = new Worker({ store, flows: [fanFlow], concurrency: 2, pollIntervalMs: 60_000, onError: (error) => errors.push(error) });
  await worker.start();
  const client = new Client({ store });
  try {
    await client.start(fanFlow, "fan-1", {});
    await pollUntil(async () => ((await client.getStepHistory("fan-1")).filter((entry) => entry.status === "completed").length === 3 ? true : undefined), { timeoutMs: 60_000, description: "Fan, Left and Right to commit" });
  } finally {
    await worker.close();
    unsubscribe();
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(ran.toSorted(), ["Left", "Right"]);
  assert.ok(wakesBeforeFanCommit >= 0);
  return wakes.slice(wakesBeforeFanCommit);
}
