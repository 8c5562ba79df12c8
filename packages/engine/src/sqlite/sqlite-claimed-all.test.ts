/**
 * On SQLite too, a claim tells whether it took every claimable task there
 * was (`claimedAll`), on the one-request path and on the general one, and a
 * commit whose claim took every task it queued wakes no Worker. Without it,
 * a commit that claimed its whole limit woke the loop, whose claim found
 * nothing: about five empty claims a turn once a Step's last Stream messages
 * went in its commit (it had been a Stream transaction's time later).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { attribute } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { completeFlow, deadEnd, moveToMany, movement } from "../step/decision.ts";
import { defineStep, type StepDefinition } from "../step/step.ts";
import type { Store, WakeEvent } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { claimCatalogOf } from "../worker/one-request-commit.ts";
import { Worker } from "../worker/worker.ts";

const Only = defineStep("Only", { execute: () => completeFlow("done") });
const onlyFlow = defineFlow({ type: "SqliteClaimMore", steps: [Only], start: "Only" });

void test("SQLite: a one-request claim says whether claimable tasks were left beyond those it took", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const { store } = temporary;
  const operations = store.oneRequest!;
  const client = new Client({ store });
  for (const id of ["m1", "m2", "m3", "m4", "m5"]) await client.start(onlyFlow, id, {});
  const { flowTypes, catalog } = claimCatalogOf(new Map([[onlyFlow.flowType, onlyFlow]]));
  const claim = async (limit: number) => {
    const reply = await operations.claimTasks({ workerId: "probe", now: store.clock.now(), claim: { flowTypes, catalog, limit } });
    return { claimed: reply.claims.length, claimedAll: reply.claimedAll };
  };
  assert.deepEqual(await claim(2), { claimed: 2, claimedAll: false }, "three are left");
  assert.deepEqual(await claim(2), { claimed: 2, claimedAll: false }, "one is left");
  assert.deepEqual(await claim(1), { claimed: 1, claimedAll: true }, "the limit took the last one");
  assert.deepEqual(await claim(3), { claimed: 0, claimedAll: true }, "nothing was there");
});

const note = attribute<string>("Note");

/** Fan moves to Left and Right; `general` makes them select a load, which the one-request claim leaves to the general path. */
async function fanWakes(store: Store, general: boolean): Promise<{ wakesAfterFan: WakeEvent[]; ran: string[] }> {
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
  const fanFlow = defineFlow({ type: general ? "SqliteFanGeneral" : "SqliteFanOneRequest", steps: [Fan, side("Left"), side("Right")], start: "Fan", persistence: { note } });
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "tasks") wakes.push(event);
  });
  // Two slots: Fan's commit claims Left and Right, its whole limit, and nothing else is queued.
  const worker = new Worker({ store, flows: [fanFlow], concurrency: 2 });
  await worker.start();
  const client = new Client({ store });
  try {
    await client.start(fanFlow, "fan-1", {});
    await pollUntil(async () => ((await client.getStepHistory("fan-1")).filter((entry) => entry.status === "completed").length === 3 ? true : undefined), { description: "Fan, Left and Right to commit" });
  } finally {
    await worker.close();
    unsubscribe();
  }
  assert.ok(wakesBeforeFanCommit >= 0);
  return { wakesAfterFan: wakes.slice(wakesBeforeFanCommit), ran: ran.toSorted() };
}

void test("SQLite: a commit that claims every task it queued wakes no Worker, on the one-request path and on the general one", async (t) => {
  for (const general of [false, true]) {
    const temporary = createTemporarySqliteStore({ pollIntervalMs: 60_000 });
    t.after(() => temporary.dispose());
    const { wakesAfterFan, ran } = await fanWakes(temporary.store, general);
    assert.deepEqual(ran, ["Left", "Right"]);
    assert.deepEqual(wakesAfterFan, [], `${general ? "general" : "one-request"} path: ${JSON.stringify(wakesAfterFan)}`);
  }
});
