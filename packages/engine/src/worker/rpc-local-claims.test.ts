/**
 * An RPC that readies a wait claims the task for a Worker of its own process
 * with a slot free, in the RPC's own request (PostgreSQL's publish RPC) or
 * transaction (SQLite): the attempt is launched before the RPC returns, the
 * Worker's loop makes no claim of its own, and Workers are woken only for
 * what the claim left. A request that fails after it may have committed
 * puts the Worker's claims in doubt; one rolled back does not.
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
import { deadEnd, moveToMany, movement } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store, WakeEvent } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { holdCommitAnswers } from "../testing/one-request-fixtures/held-commit-answer.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import { claimLocally, offerLocalClaims } from "./local-handover.ts";
import { Worker } from "./worker.ts";

const skip = postgresTestSkip(testDatabaseUrl());

const left = channel<string>("Left");
const right = channel<string>("Right");
/** What the Steps heard, as "flow step message". */
const heard: string[] = [];
/** Each Step holds its attempt until this resolves. */
let gate: Promise<void> = Promise.resolve();

const hear = (name: string, from: typeof left) => defineStep(name, {
  waitUntil: () => received(from),
  execute: async (context) => {
    heard.push(`${context.flowId} ${name} ${context.consumed(from).map((entry) => entry.message).join()}`);
    await gate;
    return deadEnd();
  },
});

/** Fan waits on nothing and moves to HearLeft and HearRight, which each wait for a message. */
const pairFlow = defineFlow({
  type: "LocalClaimPair",
  start: "Fan",
  steps: [defineStep("Fan", { execute: () => moveToMany([movement("HearLeft"), movement("HearRight")]) }), hear("HearLeft", left), hear("HearRight", right)],
  persistence: { left, right },
  rpcs: {
    // Publishes to Left only, or to both: a plan of publishes, which PostgreSQL runs as one request.
    send: rpc<{ text: string; both: boolean }, boolean>({
      name: "send",
      handler: async (context, input) => {
        await context.publish(left, input.text);
        if (input.both) await context.publish(right, input.text);
        return true;
      },
      publishes: (_context, input) => ({
        messages: input.both ? [{ channel: left, message: input.text }, { channel: right, message: input.text }] : [{ channel: left, message: input.text }],
        output: true,
      }),
    }),
    refuse: rpc<string, boolean>({
      name: "refuse",
      handler: async (context, text) => {
        await context.publish(left, text);
        throw new Error(`refused ${text} after publishing`);
      },
    }),
  },
});

/** Closes what a test opened, last opened first, the store last of all. */
class Cleanups {
  private readonly steps: (() => Promise<unknown>)[] = [];
  constructor(t: { after(fn: () => Promise<unknown>): void }) {
    t.after(async () => {
      for (const step of this.steps.toReversed()) await step();
    });
  }
  add(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }
}

/** A Pair Flow whose HearLeft and HearRight both wait, on a started Worker with slots free. */
async function waitingPair(store: Store, flowId: string, cleanups: Cleanups) {
  const worker = new Worker({ store, flows: [pairFlow], concurrency: 4, pollIntervalMs: 60_000 });
  await worker.start();
  cleanups.add(() => worker.close());
  const client = new Client({ store });
  await client.start(pairFlow, flowId, {});
  await pollUntil(async () => {
    const { executions } = await client.describe(flowId);
    return executions.length === 2 && executions.every((execution) => execution.status === "waiting");
  }, { timeoutMs: 60_000, description: `${flowId} to wait on both Channels` });
  const wakes: WakeEvent[] = [];
  const unsubscribe = store.subscribe((event) => {
    if (event.kind === "tasks") wakes.push(event);
  });
  cleanups.add(async () => unsubscribe());
  return { worker, client, wakes };
}

/** The attempt numbers of a Step's committed executes, once one has committed. */
async function executeAttempts(client: Client, flowId: string, stepType: string): Promise<number[]> {
  let attempts: number[] = [];
  await pollUntil(async () => {
    const history = await client.getStepHistory(flowId);
    attempts = history.filter((entry) => entry.stepType === stepType && entry.method === "execute").map((entry) => entry.attempt);
    return attempts.length > 0;
  }, { timeoutMs: 60_000, description: `${stepType}'s execute to commit` });
  return attempts;
}

/** Counts the Worker loop's one-request claims (PostgreSQL); SQLite claims in general transactions. */
function countLoopClaims(store: Store): () => number {
  const operations = store.oneRequest;
  if (operations === undefined || operations.embedded === true) return () => 0;
  let claims = 0;
  const claimTasks = operations.claimTasks.bind(operations);
  operations.claimTasks = async (claim) => {
    claims += 1;
    return claimTasks(claim);
  };
  return () => claims;
}

/** One task readied: claimed by the RPC, launched before it returns, and nobody woken; two readied: the rest wakes Workers. */
async function rpcHandsOver(store: Store, cleanups: Cleanups): Promise<void> {
  heard.length = 0;
  let release: () => void = () => undefined;
  gate = new Promise((resolve) => { release = resolve; });
  const { worker, client, wakes } = await waitingPair(store, "pair-1", cleanups);
  // Before the Worker closes, should an assertion fail while HearLeft holds its attempt.
  cleanups.add(async () => release());
  const loopClaims = countLoopClaims(store);

  assert.equal(await client.invokeRPC(pairFlow.send, "pair-1", { text: "hello", both: false }), true);
  assert.equal(worker.activeCount, 1, "the RPC's reply launched HearLeft");
  assert.deepEqual(wakes, [], "the claim took all there was: no Worker was woken");
  release();
  await pollUntil(() => heard.length === 1, { timeoutMs: 60_000, description: "HearLeft to run" });
  assert.deepEqual(heard, ["pair-1 HearLeft hello"]);
  assert.deepEqual(await executeAttempts(client, "pair-1", "HearLeft"), [1]);

  // Both of a second Pair's waits become ready: the RPC claims one, and wakes Workers for the other.
  gate = Promise.resolve();
  const second = await waitingPair(store, "pair-2", cleanups);
  const wakesBefore = second.wakes.length;
  assert.equal(await second.client.invokeRPC(pairFlow.send, "pair-2", { text: "both", both: true }), true);
  assert.ok(second.wakes.length > wakesBefore, "the claim left a task, so Workers were woken");
  await pollUntil(() => heard.length === 3, { timeoutMs: 60_000, description: "pair-2's Steps to run" });
  assert.deepEqual(heard.slice(1).toSorted(), ["pair-2 HearLeft both", "pair-2 HearRight both"]);
  if (store.oneRequest?.embedded !== true) assert.ok(loopClaims() > 0, "the Worker's loop claimed what the RPC left");
}

void test("SQLite: an RPC's transaction claims what it readied for a Worker of its process, which runs it before the RPC returns", async (t) => {
  const temporary = createTemporarySqliteStore();
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  await rpcHandsOver(temporary.store, cleanups);
});

void test("PostgreSQL: a publish RPC claims what it readied for a Worker of its process, in its one request", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  const store = await temporary.open();
  assert.equal(store.oneRequest?.claimsInRpcs, true, "the schema has migration 0022");
  await rpcHandsOver(store, cleanups);
});

/**
 * A commit whose claim holds the Worker's free slots is in flight when the
 * RPC comes: the RPC waits for it to give back what it did not fill, then
 * claims. (The commit's answer is held after it landed, and let go as soon
 * as the RPC is under way.)
 */
async function rpcWaitsForAClaimInFlight(store: Store, cleanups: Cleanups): Promise<void> {
  heard.length = 0;
  let release: () => void = () => undefined;
  gate = new Promise((resolve) => { release = resolve; });
  const worker = new Worker({ store, flows: [pairFlow, soloFlow], concurrency: 2, pollIntervalMs: 60_000 });
  await worker.start();
  cleanups.add(() => worker.close());
  cleanups.add(async () => release());
  const client = new Client({ store });
  await client.start(pairFlow, "pair-w", {});
  await pollUntil(async () => (await client.describe("pair-w")).executions.every((execution) => execution.status === "waiting"), { timeoutMs: 60_000, description: "pair-w to wait" });
  const soloCommit = holdCommitAnswers(store, "solo");
  cleanups.add(async () => soloCommit.letGo());
  await client.start(soloFlow, "solo", {});
  await soloCommit.landed();
  assert.equal(worker.activeCount, 1, "Solo's attempt still counts until its commit answers, and its claim holds the other slot");

  const sent = client.invokeRPC(pairFlow.send, "pair-w", { text: "waited", both: false });
  soloCommit.letGo();
  assert.equal(await sent, true);
  assert.equal(worker.activeCount, 1, "the RPC claimed HearLeft once Solo's claim gave its slot back");
  release();
  assert.deepEqual(await executeAttempts(client, "pair-w", "HearLeft"), [1]);
  assert.deepEqual(heard, ["pair-w HearLeft waited"]);
}

const soloFlow = defineFlow({ type: "LocalClaimSolo", start: "Solo", steps: [defineStep("Solo", { execute: () => deadEnd() })] });

void test("SQLite: an RPC waits for a commit's claim in flight to give back the slots it holds, then claims", async (t) => {
  const temporary = createTemporarySqliteStore();
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  await rpcWaitsForAClaimInFlight(temporary.store, cleanups);
});

void test("PostgreSQL: an RPC waits for a commit's claim in flight to give back the slots it holds, then claims", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  await rpcWaitsForAClaimInFlight(await temporary.open(), cleanups);
});

void test("PostgreSQL: a publish RPC whose reply is lost after it committed still has its task run: the Worker adopts the claim", { skip }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  const store = await temporary.open();
  const operations = store.oneRequest;
  assert.ok(operations?.publishRpc !== undefined);
  heard.length = 0;
  gate = Promise.resolve();
  const { client } = await waitingPair(store, "lost", cleanups);
  const publishRpc = operations.publishRpc;
  let claimedInRpc = 0;
  operations.publishRpc = async (request) => {
    const reply = await publishRpc(request);
    if (reply.outcome === "published") claimedInRpc = reply.claimed?.claims.length ?? 0;
    throw new Error("connection lost after COMMIT");
  };
  await assert.rejects(client.invokeRPC(pairFlow.send, "lost", { text: "lost", both: false }), /connection lost after COMMIT/);
  operations.publishRpc = publishRpc;
  assert.equal(claimedInRpc, 1, "the RPC claimed HearLeft");
  await pollUntil(() => heard.length === 1, { timeoutMs: 60_000, description: "the adopted HearLeft to run" });
  assert.deepEqual(heard, ["lost HearLeft lost"]);
  assert.deepEqual(await executeAttempts(client, "lost", "HearLeft"), [1], "the RPC's own lease ran, not a recovery");
});

void test("SQLite: an RPC whose handler throws rolls back its publish and claims nothing; the Worker's claims stay trusted", async (t) => {
  const temporary = createTemporarySqliteStore();
  const cleanups = new Cleanups(t);
  cleanups.add(() => temporary.dispose());
  heard.length = 0;
  gate = Promise.resolve();
  const { worker, client } = await waitingPair(temporary.store, "refused", cleanups);
  await assert.rejects(client.invokeRPC(pairFlow.refuse, "refused", "no"), /refused no after publishing/);
  assert.equal(worker.activeCount, 0);
  assert.deepEqual((await client.describe("refused")).executions.map((execution) => execution.status), ["waiting", "waiting"]);
  // Not in doubt: the next RPC still finds the Worker's slot free and hands over at once.
  assert.equal(await client.invokeRPC(pairFlow.send, "refused", { text: "after", both: false }), true);
  assert.equal(worker.activeCount, 1);
  await pollUntil(() => heard.length === 1, { timeoutMs: 60_000, description: "HearLeft to run" });
});

void test("a local claim's request: rolled back before committing, it is not in doubt; failing after, it is; with its result reported, the result stands", async () => {
  const store = {} as Store;
  let adoptions = 0;
  const launched: string[] = [];
  const ledger = new ClaimLedger({
    launch: (claim) => launched.push(claim.execution.executionId),
    adoptLostClaims: async () => {
      adoptions += 1;
      return true;
    },
    resume: () => undefined,
    onError: () => undefined,
  });
  let reserved = 0;
  offerLocalClaims(store, {
    workerId: "w",
    flows: new Map([[pairFlow.flowType, pairFlow]]),
    reserveSlot: () => {
      reserved += 1;
      return true;
    },
    reserveSlotSoon: async () => {
      reserved += 1;
      return true;
    },
    runClaim: async (request) => {
      try {
        await ledger.run(1, request, 0);
      } finally {
        reserved -= 1;
      }
    },
  });
  const run = async <T>(request: Parameters<NonNullable<Awaited<ReturnType<typeof claimLocally>>>["run"]>[0]) => {
    const local = await claimLocally(store, pairFlow);
    assert.ok(local !== undefined);
    return local.run(request) as Promise<T>;
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

  await assert.rejects(run(async () => {
    throw new Error("rolled back");
  }), /rolled back/);
  await settle();
  assert.equal(adoptions, 0, "a request rolled back before its commit claimed nothing");

  await assert.rejects(run(async (progress) => {
    progress.committing();
    throw new Error("no answer to COMMIT");
  }), /no answer to COMMIT/);
  await settle();
  assert.equal(adoptions, 1, "a request that may have committed puts the claims in doubt");

  assert.equal(await run<string>(async (progress) => {
    progress.committing();
    progress.committed("published");
    throw new Error("the claimed task's loads could not be read");
  }), "published");
  await settle();
  assert.equal(adoptions, 2, "claims that failed to launch are adopted; the RPC's result stands");
  assert.equal(reserved, 0, "every held slot was given back");
  assert.deepEqual(launched, []);
});
