/**
 * Migration 0019: `perdure_claim_plain` tells whether claimable tasks were
 * left (`claimedAll`), and a Worker whose commit claimed every task there
 * was wakes no Worker, where it woke its own loop and every other process
 * (a NOTIFY) to look for more and find nothing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, deadEnd, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { WakeEvent } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { claimCatalogOf } from "../worker/one-request-commit.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

const Only = defineStep("Only", { execute: () => completeFlow("done") });
const onlyFlow = defineFlow({ type: "ClaimMore", steps: [Only], start: "Only" });

void test("a claim says whether claimable tasks were left beyond those it took", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
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
});

void test("a commit that claims every task it queued wakes no Worker", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
  const ran: string[] = [];
  const wakes: WakeEvent[] = [];
  let wakesBeforeFanCommit = -1;
  const Fan = defineStep("Fan", {
    execute: () => {
      wakesBeforeFanCommit = wakes.length;
      return moveToMany([movement("Left"), movement("Right")]);
    },
  });
  const Left = defineStep("Left", { execute: () => { ran.push("Left"); return deadEnd(); } });
  const Right = defineStep("Right", { execute: () => { ran.push("Right"); return deadEnd(); } });
  const fanFlow = defineFlow({ type: "ClaimMoreFan", steps: [Fan, Left, Right], start: "Fan" });
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "tasks") wakes.push(event);
  });
  t.after(unsubscribe);
  const errors: unknown[] = [];
  // Two slots: Fan's commit claims Left and Right, its whole limit (2), and nothing else is queued.
  const worker = new Worker({ store, flows: [fanFlow], concurrency: 2, pollIntervalMs: 60_000, onError: (error) => errors.push(error) });
  await worker.start();
  const client = new Client({ store });
  try {
    await client.start(fanFlow, "fan-1", {});
    await pollUntil(async () => (await client.getStepHistory("fan-1")).filter((entry) => entry.status === "completed").length === 3, { timeoutMs: 60_000, description: "Fan, Left and Right to commit" });
  } finally {
    await worker.close();
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(ran.toSorted(), ["Left", "Right"]);
  // Fan's commit claimed both tasks it queued, its whole limit, and the store said none was left: no wake-up since.
  assert.ok(wakesBeforeFanCommit >= 0);
  assert.equal(wakes.length, wakesBeforeFanCommit, JSON.stringify(wakes));
});
