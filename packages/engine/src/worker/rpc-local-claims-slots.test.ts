/**
 * The Worker slot an RPC holds while it may claim for a local Worker (see
 * local-handover.ts), from the review of that change: a slot the RPC gives
 * back without claiming must not cost a task readied meanwhile its wake-up
 * (the loop found no slot free and slept), and with several Workers in the
 * process the RPC takes a free slot before it waits on a busy Worker.
 * Each test failed before its fix.
 * docs/decisions/2026-12-07-rpc-claims-for-a-local-worker.md
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { channel } from "../channel/channel.ts";
import { Client } from "../client/client.ts";
import { received } from "../condition/condition.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { rpc } from "../rpc/rpc.ts";
import { deadEnd } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { holdCommitAnswers } from "../testing/one-request-fixtures/held-commit-answer.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "./worker.ts";

const skip = postgresTestSkip(testDatabaseUrl());

const left = channel<string>("Left");
const other = channel<string>("Other");
const heard: string[] = [];

const probeFlow = defineFlow({
  type: "LocalClaimSlots",
  start: "Hear",
  steps: [defineStep("Hear", {
    waitUntil: () => received(left),
    execute: (context) => {
      heard.push(`${context.flowId} ${context.consumed(left).map((entry) => entry.message).join()}`);
      return deadEnd();
    },
  })],
  persistence: { left, other },
  rpcs: {
    /** Readies Hear. */
    send: rpc<string, boolean>({
      name: "send",
      handler: async (context, text) => {
        await context.publish(left, text);
        return true;
      },
      publishes: (_context, text) => ({ messages: [{ channel: left, message: text }], output: true }),
    }),
    /** Publishes where nothing waits: readies nothing. */
    note: rpc<string, boolean>({
      name: "note",
      handler: async (context, text) => {
        await context.publish(other, text);
        return true;
      },
      publishes: (_context, text) => ({ messages: [{ channel: other, message: text }], output: true }),
    }),
  },
});

async function waiting(client: Client, flowId: string): Promise<void> {
  await client.start(probeFlow, flowId, {});
  await pollUntil(async () => {
    const { executions } = await client.describe(flowId);
    return executions.length === 1 && executions[0]!.status === "waiting";
  }, { timeoutMs: 30_000, description: `${flowId} to wait` });
}

/**
 * A Worker with one slot; an RPC that readies nothing holds that slot
 * (reserved for a local claim) while another RPC readies a task. The wake-up
 * for that task finds no slot free; when the first RPC gives its slot back
 * claiming nothing, nobody wakes the loop, and the task waits for the poll
 * (60 s here). `holdFirstRpc` holds the first RPC's request, after its slot
 * is reserved, until the returned release is called.
 */
async function slotGivenBackWakesTheLoop(store: Store, holdFirstRpc: (store: Store) => { held: () => boolean; release: () => void }): Promise<void> {
  heard.length = 0;
  const worker = new Worker({ store, flows: [probeFlow], concurrency: 1, pollIntervalMs: 60_000 });
  await worker.start();
  try {
    const client = new Client({ store });
    await waiting(client, "a");
    await waiting(client, "b");
    const hold = holdFirstRpc(store);
    const first = client.invokeRPC(probeFlow.note, "b", "nothing readied");
    await pollUntil(() => hold.held(), { timeoutMs: 10_000, description: "the first RPC to hold the Worker's slot" });
    // Readies a's Hear; the Worker's only slot is held by the first RPC.
    assert.equal(await client.invokeRPC(probeFlow.send, "a", "hello"), true);
    hold.release();
    assert.equal(await first, true);
    const startedAt = performance.now();
    await pollUntil(() => heard.length === 1, { timeoutMs: 5_000, description: "a's Hear to run once the slot was given back" }).catch((error: unknown) => {
      throw new Error(`a's readied task did not run within 5 s of the slot being given back (the loop sleeps until its poll): ${String(error)}`);
    });
    assert.ok(performance.now() - startedAt < 5_000);
    assert.deepEqual(heard, ["a hello"]);
  } finally {
    await worker.close({ drainTimeoutMs: 1000 });
  }
}

void test("PostgreSQL: a publish RPC that readies nothing gives back its reserved slot and the loop claims the task readied meanwhile", { skip }, async () => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  try {
    const store = await temporary.open();
    assert.equal(store.oneRequest?.claimsInRpcs, true);
    await slotGivenBackWakesTheLoop(store, (held) => {
      const operations = held.oneRequest!;
      const publishRpc = operations.publishRpc!;
      let holding = false;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      let armed = true;
      (operations as { publishRpc: typeof publishRpc }).publishRpc = async (request) => {
        if (armed && request.flowId === "b") {
          armed = false;
          assert.ok(request.claim !== undefined, "the first RPC holds a slot for a local claim");
          holding = true;
          await gate;
        }
        return publishRpc(request);
      };
      return { held: () => holding, release };
    });
  } finally {
    await temporary.dispose();
  }
});

void test("SQLite: an RPC that readies nothing gives back its reserved slot and the loop claims the task readied meanwhile", async () => {
  const temporary = createTemporarySqliteStore();
  try {
    await slotGivenBackWakesTheLoop(temporary.store, (store) => {
      const transaction = store.transaction.bind(store);
      let holding = false;
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      let armed = true;
      (store as { transaction: Store["transaction"] }).transaction = (async (work: Parameters<Store["transaction"]>[0]) => {
        // The RPC's transaction, called by invoke-rpc's runRpcTransaction after claimLocally reserved the slot.
        if (armed && new Error().stack?.includes("runRpcTransaction") === true) {
          armed = false;
          holding = true;
          await gate;
        }
        return transaction(work);
      }) as Store["transaction"];
      return { held: () => holding, release };
    });
  } finally {
    await temporary.dispose();
  }
});

const soloFlow = defineFlow({ type: "LocalClaimSlotsSolo", start: "Solo", steps: [defineStep("Solo", { execute: () => deadEnd() })] });

/**
 * Two Workers of one process host the Flow. The first has no slot free, but
 * a commit's claim in flight holds one (its answer is held here); the second
 * has every slot free. The RPC must take the second Worker's slot without
 * waiting on the first (it used to await the first Worker's reserveSlotSoon,
 * up to 20 ms, before it asked the second).
 */
void test("SQLite: with several Workers, an RPC does not wait for a busy Worker's claim while another has a slot free", async () => {
  const temporary = createTemporarySqliteStore();
  const store = temporary.store;
  const closing: Worker[] = [];
  let letGo: () => void = () => undefined;
  try {
    heard.length = 0;
    const first = new Worker({ store, flows: [probeFlow, soloFlow], concurrency: 2, pollIntervalMs: 60_000 });
    await first.start();
    closing.push(first);
    const second = new Worker({ store, flows: [probeFlow], concurrency: 2, pollIntervalMs: 60_000 });
    await second.start();
    closing.push(second);
    const client = new Client({ store });
    for (const flowId of ["m1", "m2", "m3"]) await waiting(client, flowId);
    const soloCommit = holdCommitAnswers(store, "solo");
    letGo = () => soloCommit.letGo();
    await client.start(soloFlow, "solo", {});
    await soloCommit.landed();
    assert.equal(second.activeCount, 0);
    // Count the RPCs that waited on the first Worker for a slot.
    let waited = 0;
    const soon = (first as unknown as { reserveLocalSlotSoon: () => Promise<boolean> }).reserveLocalSlotSoon.bind(first);
    (first as unknown as { reserveLocalSlotSoon: () => Promise<boolean> }).reserveLocalSlotSoon = async () => {
      waited += 1;
      return soon();
    };
    let sent = 0;
    for (const flowId of ["m1", "m2", "m3"]) {
      assert.equal(await client.invokeRPC(probeFlow.send, flowId, flowId), true);
      sent += 1;
      // The second Worker idle again (its commit's claim in flight would hold its free slots too).
      await pollUntil(() => heard.length === sent && second.activeCount === 0, { timeoutMs: 10_000, description: `${flowId}'s Hear to run` });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(waited, 0, "no RPC waited on the busy first Worker while the second had slots free");
  } finally {
    letGo();
    for (const worker of closing.toReversed()) await worker.close({ drainTimeoutMs: 1000 });
    await temporary.dispose();
  }
});
