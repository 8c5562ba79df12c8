import assert from "node:assert/strict";
import { test } from "node:test";
import { attribute } from "../attribute/attribute.ts";
import { defineFlow } from "../flow/flow.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "../postgres/temporary-postgres-schema.ts";
import { deadEnd, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { Store } from "../store/store.ts";
import { createTemporarySqliteStore } from "../testing/temporary-sqlite-store.ts";
import { Worker } from "../worker/worker.ts";
import { deliverLocalCommit, markCommitSend } from "../flow/local-commits.ts";
import { noteLocalAttempt, runsLocally } from "../flow/local-attempts.ts";
import { Client } from "./client.ts";
import { waitForChange } from "./wait-for-change.ts";

/** Longer than any test here runs: a wait that ends early was woken by a commit, not by polling. */
const noPolling = 600_000;

/** Writes `Stage` 1, then 2 and 3 in Steps that each wait for their own release, then holds until release 4. */
function stagedFlow() {
  const stage = attribute<number>("Stage");
  const releases = [1, 2, 3, 4].map(() => Promise.withResolvers<void>());
  const staged = (index: number) => defineStep(`Stage${index}`, {
    execute: async (context) => {
      await releases[index - 1]!.promise;
      context.write(stage, index);
      return moveTo(`Stage${index + 1}`);
    },
  });
  const hold = defineStep("Stage4", {
    execute: async () => {
      await releases[3]!.promise;
      return deadEnd();
    },
  });
  const flow = defineFlow({ type: "Staged", start: "Stage1", steps: [staged(1), staged(2), staged(3), hold], persistence: { stage } });
  return { flow, stage, release: (index: number) => releases[index - 1]!.resolve() };
}

/** Counts the Client's attribute reads, by whichever path the store offers. */
function countReads(store: Store): { count: number } {
  const reads = { count: 0 };
  const operations = store.oneRequest;
  const readAttributes = operations?.readAttributes?.bind(operations);
  if (operations !== undefined && readAttributes !== undefined) {
    Object.defineProperty(operations, "readAttributes", { configurable: true, value: (...args: Parameters<typeof readAttributes>) => (reads.count += 1, readAttributes(...args)) });
    return reads;
  }
  const read = store.read?.bind(store) ?? store.transaction.bind(store);
  Object.defineProperty(store, store.read === undefined ? "transaction" : "read", { configurable: true, value: (work: Parameters<typeof read>[0]) => (reads.count += 1, read(work)) });
  return reads;
}

/** Opens a temporary SQLite store, and a PostgreSQL one when a test server is configured, both without polling. */
function storesWithoutPolling(): Array<() => Promise<{ store: Store; dispose: () => Promise<void> | void }>> {
  return [
    async () => {
      const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
      return { store: temporary.store, dispose: () => temporary.dispose() };
    },
    ...(postgresTestSkip(testDatabaseUrl()) === false ? [async () => {
      const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
      return { store: await temporary.open({ pollIntervalMs: noPolling }), dispose: () => temporary.dispose() };
    }] : []),
  ];
}

/** Opens a store with `open` and starts a staged Flow on it, with a Worker of this process; both close after the test. */
async function startStaged(open: ReturnType<typeof storesWithoutPolling>[number], t: { after(fn: () => unknown): void }, flowId: string) {
  const { store, dispose } = await open();
  t.after(dispose);
  const { flow, stage, release } = stagedFlow();
  const worker = new Worker({ store, flows: [flow] });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store });
  await client.start(flow, flowId, {});
  return { store, worker, client, stage, release };
}

void test("waitForAttributes reads again after each local commit that writes the Flow's Attributes, never waits for the poll interval, and gives up at its timeout", async (t) => {
  for (const open of storesWithoutPolling()) {
    const { client, stage, release, worker, store } = await startStaged(open, t, "staged-1");

    assert.deepEqual(await client.waitForAttributes("staged-1", [stage], ([value]) => value !== undefined, { timeoutMs: 50 }), [undefined], "a timeout returns what it read last");
    const reads = countReads(store);
    const third = client.waitForAttributes("staged-1", [stage], ([value]) => value === 3, { timeoutMs: noPolling / 2 });
    for (const index of [1, 2, 3]) release(index);
    assert.deepEqual(await third, [3]);
    // One read at the start and at most one after each of the three commits (two when a commit lands mid-read);
    // none after a commit sent once the last read returned, whose values are the result.
    assert.ok(reads.count >= 1 && reads.count <= 7, `${reads.count} reads`);

    await assert.rejects(client.waitForAttributes("staged-1", [stage], () => true, { timeoutMs: -1 }), { name: "InvalidInputError", message: /waitForAttributes timeoutMs -1 is invalid/ });
    await assert.rejects(client.waitForAttributes("no-such-flow", [stage], () => true), { name: "FlowNotFoundError", message: /no Flow has ID "no-such-flow"/ });
    release(4);
    await worker.close();
  }
});

void test("a wait for some Attributes reads again after a local commit that wrote one of them, not after commits that wrote only others", async (t) => {
  const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
  t.after(() => temporary.dispose());
  let reads = 0;
  let stageWritten = false;
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  const waiting = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, names: new Set(["Stage"]) }, async () => {
    reads += 1;
    return stageWritten;
  }, (written) => written);
  await settle();
  for (let commit = 0; commit < 5; commit += 1) {
    deliverLocalCommit(temporary.store, "flow-1", ["Noise", "Other"]);
    await settle();
  }
  assert.equal(reads, 1, "commits that wrote only other Attributes read nothing");
  // Another Flow's commit, and then one that wrote Stage among others.
  deliverLocalCommit(temporary.store, "flow-2", ["Stage"]);
  await settle();
  assert.equal(reads, 1);
  stageWritten = true;
  deliverLocalCommit(temporary.store, "flow-1", ["Noise", "Stage"]);
  assert.equal(await waiting, true);
  assert.equal(reads, 2);
  // A commit whose names are not known wakes every wait of the Flow.
  let unknownReads = 0;
  let released = false;
  const unknown = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, names: new Set(["Stage"]) }, async () => {
    unknownReads += 1;
    return released;
  }, (value) => value);
  await settle();
  released = true;
  deliverLocalCommit(temporary.store, "flow-1");
  assert.equal(await unknown, true);
  assert.equal(unknownReads, 2);
});

void test("a local commit that wrote every awaited Attribute is judged by its values: the Client reads again only when `until` accepts them", async (t) => {
  for (const open of storesWithoutPolling()) {
    const { client, stage, release, worker, store } = await startStaged(open, t, "staged-2");
    // The Worker notes the attempt it runs (Stage1 waits for its release).
    while (!runsLocally(store, "staged-2")) await new Promise((resolve) => setTimeout(resolve, 5));
    const reads = countReads(store);
    const judged: (number | undefined)[] = [];
    const third = client.waitForAttributes("staged-2", [stage], ([value]) => {
      judged.push(value);
      return value === 3;
    }, { timeoutMs: noPolling / 2 });
    // The first read returned (until judged it) before any Step commits.
    while (judged.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const index of [1, 2, 3]) release(index);
    assert.deepEqual(await third, [3]);
    // The first read only: commits 1 and 2 read nothing, and commit 3, sent after that read returned, is the result
    // where the Worker commits in one request (its commits carry a send mark); a general commit is read again.
    const oneRequest = store.oneRequest !== undefined && (store.oneRequest as { embedded?: boolean }).embedded !== true;
    assert.ok(oneRequest ? reads.count === 1 : reads.count >= 1 && reads.count <= 2, `${reads.count} reads`);
    assert.ok(judged.at(-1) === 3, `until saw ${JSON.stringify(judged)}`);
    release(4);
    await worker.close();
    assert.equal(runsLocally(store, "staged-2"), false, "a closed Worker runs no attempt of the Flow");
  }
});

void test("a wait judges a local commit by the values it wrote: other instances read nothing, a refused value reads nothing, an accepted one is read again, a partial one is read", async (t) => {
  const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
  t.after(() => temporary.dispose());
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  let reads = 0;
  let stored = 0;
  const wanted = [{ name: "Stage", key: "a" }, { name: "Stage", key: "b" }];
  const fromWrites = (values: readonly { name: string; key: string; value: string | null }[]) => {
    const found = wanted.map((ref) => values.find((value) => value.name === ref.name && value.key === ref.key));
    if (found.every((value) => value === undefined)) return "unchanged" as const;
    if (found.some((value) => value === undefined)) return undefined;
    return { result: found.reduce((sum, value) => sum + (value!.value === null ? 0 : Number(value!.value)), 0) };
  };
  const waiting = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, names: new Set(["Stage"]), fromWrites }, async () => {
    reads += 1;
    return stored;
  }, (sum) => sum >= 10);
  await settle();
  assert.equal(reads, 1);
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", key: "c", value: "50" }]);
  await settle();
  assert.equal(reads, 1, "a commit that wrote another instance of the map reads nothing");
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", key: "a", value: "2" }, { name: "Stage", key: "b", value: null }]);
  await settle();
  assert.equal(reads, 1, "a commit whose values `until` refuses reads nothing");
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", key: "a", value: "3" }]);
  await settle();
  assert.equal(reads, 2, "a commit that wrote some of the awaited instances is read");
  stored = 12;
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", key: "a", value: "6" }, { name: "Stage", key: "b", value: "6" }]);
  assert.equal(await waiting, 12, "the result comes from the read that confirms it");
  assert.equal(reads, 3);
  // A value the read would refuse (the codec throws) is left to the read.
  let refusedReads = 0;
  const refused = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, fromWrites: () => { throw new Error("not a number"); } }, async () => {
    refusedReads += 1;
    return refusedReads;
  }, (count) => count >= 2);
  await settle();
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", key: "a", value: "x" }]);
  assert.equal(await refused, 2);
});

void test("a local commit sent after the last read returned is the result when `until` accepts it; one sent before is read again", async (t) => {
  const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
  t.after(() => temporary.dispose());
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  const fromWrites = (values: readonly { name: string; key: string; value: string | null }[]) => {
    const stage = values.find((value) => value.name === "Stage");
    return stage === undefined ? ("unchanged" as const) : { result: Number(stage.value) };
  };
  // Sent after the read returned: the values are the result, with no read.
  let reads = 0;
  const after = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, fromWrites }, async () => {
    reads += 1;
    return 0;
  }, (stage) => stage >= 2);
  await settle();
  assert.equal(reads, 1);
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", value: "1", key: "" }], markCommitSend());
  await settle();
  assert.equal(reads, 1, "a refused value reads nothing");
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", value: "2", key: "" }], markCommitSend());
  assert.equal(await after, 2);
  assert.equal(reads, 1, "the accepted values of a commit sent after the read are the result");
  // Sent while the read ran (its mark is older than the read's return): the read may have seen a later state, so read.
  let stored = 0;
  let beforeReads = 0;
  const gate = Promise.withResolvers<void>();
  let early = 0;
  const before = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, fromWrites }, async () => {
    beforeReads += 1;
    if (beforeReads === 1) {
      early = markCommitSend();
      await gate.promise;
    }
    return stored;
  }, (stage) => stage >= 2);
  await settle();
  gate.resolve();
  await settle();
  assert.equal(beforeReads, 1);
  stored = 5;
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", value: "2", key: "" }], early);
  assert.equal(await before, 5, "the result comes from the read that confirms it");
  assert.equal(beforeReads, 2);
  // A commit with no mark (a general transaction) is read again too.
  let unmarkedReads = 0;
  const unmarked = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined, fromWrites }, async () => {
    unmarkedReads += 1;
    return unmarkedReads === 1 ? 0 : 7;
  }, (stage) => stage >= 2);
  await settle();
  deliverLocalCommit(temporary.store, "flow-1", ["Stage"], [{ name: "Stage", value: "2", key: "" }]);
  assert.equal(await unmarked, 7);
  assert.equal(unmarkedReads, 2);
});

void test("a Stream wake-up of a Flow reads again unless a Worker of this process runs one of the Flow's Steps (its commit will tell)", async (t) => {
  const temporary = createTemporarySqliteStore({ pollIntervalMs: noPolling });
  t.after(() => temporary.dispose());
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  let reads = 0;
  let done = false;
  const waiting = waitForChange(temporary.store, "flow-1", { timeoutMs: noPolling / 2, signal: undefined }, async () => {
    reads += 1;
    return done;
  }, (value) => value);
  await settle();
  assert.equal(reads, 1);
  temporary.store.wake({ kind: "stream", flowId: "flow-1", stream: "Events" });
  await settle();
  assert.equal(reads, 2, "with no local attempt, a Stream wake-up is another process's Step: read");
  const ended = noteLocalAttempt(temporary.store, "flow-1");
  const other = noteLocalAttempt(temporary.store, "flow-2");
  temporary.store.wake({ kind: "stream", flowId: "flow-1", stream: "Events" });
  await settle();
  assert.equal(reads, 2, "a Stream wake-up while this process runs the Flow's Step reads nothing");
  ended();
  ended();
  temporary.store.wake({ kind: "stream", flowId: "flow-1", stream: "Events" });
  await settle();
  assert.equal(reads, 3, "once the attempt ended (noted once), Stream wake-ups read again");
  other();
  done = true;
  deliverLocalCommit(temporary.store, "flow-1");
  assert.equal(await waiting, true);
});
