import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "../errors/invalid-input-error.ts";
import type { Store } from "../store/store.ts";
import { runStoreConformanceSuite } from "./conformance/run-store-conformance-suite.ts";
import { FaultInjectingStore } from "./fault-injecting-store.ts";
import { injectedFaultOf, storeFaultError, type StoreFaultKind } from "./store-fault.ts";
import { createTemporarySqliteStore } from "./temporary-sqlite-store.ts";

runStoreConformanceSuite({
  name: "fault-injecting store over sqlite, injecting nothing",
  openStore: async () => {
    const temporary = createTemporarySqliteStore();
    const wrap = (store: Store) => new FaultInjectingStore(store, { injecting: false });
    return { store: wrap(temporary.store), reopen: async () => wrap(temporary.reopen()), dispose: () => temporary.dispose() };
  },
});

/** Writes `value` under `key` in one transaction; returns the injected fault, "ok", or rethrows a real error. */
async function writeOnce(store: Store, key: string, value = "1"): Promise<StoreFaultKind | "ok"> {
  try {
    await store.transaction((transaction) => transaction.writeAttribute("flow-1", "Notes", key, value));
    return "ok";
  } catch (error) {
    const kind = injectedFaultOf(error);
    if (kind === undefined) throw error;
    return kind;
  }
}

function readBack(store: Store, key: string): Promise<string | undefined> {
  return store.transaction((transaction) => transaction.readAttribute("flow-1", "Notes", key));
}

void test("the same seed makes the same fault schedule, another seed another, at about the asked rate", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const schedule = async (seed: number): Promise<(StoreFaultKind | "ok")[]> => {
    const store = new FaultInjectingStore(temporary.store, { seed, transactionFaultRate: 0.2 });
    const outcomes: (StoreFaultKind | "ok")[] = [];
    for (let index = 0; index < 400; index++) outcomes.push(await writeOnce(store, `seed-${seed}-${index}`));
    assert.equal(store.injectedTotal, outcomes.filter((outcome) => outcome !== "ok").length);
    assert.equal(store.transactionCount, 400);
    return outcomes;
  };
  const first = await schedule(5);
  assert.deepEqual(await schedule(5), first);
  assert.notDeepEqual(await schedule(6), first);
  const faults = first.filter((outcome) => outcome !== "ok");
  assert.ok(faults.length > 40 && faults.length < 120, `${faults.length} faults in 400 transactions at rate 0.2`);
  assert.deepEqual(new Set(faults), new Set(["busy", "io-error", "disk-full", "commit-outcome-unknown"]), "a SQLite store draws from the SQLite faults");
});

void test("a fault at begin runs no work, a fault at commit rolls the work back, and commit-outcome-unknown commits before it throws", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const plan: Record<number, [stage: string, kind: StoreFaultKind]> = { 0: ["begin", "busy"], 1: ["commit", "io-error"], 2: ["commit", "disk-full"], 3: ["commit", "commit-outcome-unknown"] };
  const store = new FaultInjectingStore(temporary.store, {
    chooseFault: (point) => (plan[point.transaction]?.[0] === point.stage ? plan[point.transaction]?.[1] : undefined),
  });
  let ranWork = false;
  await assert.rejects(store.transaction(async () => { ranWork = true; }), (error) => injectedFaultOf(error) === "busy");
  assert.equal(ranWork, false);
  assert.equal(await writeOnce(store, "rolled-back-io"), "io-error");
  assert.equal(await writeOnce(store, "rolled-back-full"), "disk-full");
  assert.equal(await writeOnce(store, "landed"), "commit-outcome-unknown");
  assert.equal(await readBack(temporary.store, "rolled-back-io"), undefined);
  assert.equal(await readBack(temporary.store, "rolled-back-full"), undefined);
  assert.equal(await readBack(temporary.store, "landed"), "1");
  assert.deepEqual(store.injected, { "busy": 1, "io-error": 1, "disk-full": 1, "connection-reset": 0, "commit-outcome-unknown": 1 });
});

void test("with oneRequest, a request fails before it runs, or after it ran with commit-outcome-unknown; without it the wrapper offers no requests", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const operations = temporary.store.oneRequest!;
  const ran: string[] = [];
  // The SQLite store, with each request it runs noted.
  const observed = new Proxy(operations, {
    get: (target, property, receiver) => {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        ran.push(String(property));
        return (value as (...callArgs: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const inner: Store = Object.create(temporary.store, { oneRequest: { value: observed } }) as Store;
  assert.equal(new FaultInjectingStore(inner).oneRequest, undefined);

  const plan: Record<number, [stage: string, kind: StoreFaultKind]> = { 0: ["begin", "io-error"], 2: ["commit", "commit-outcome-unknown"] };
  const store = new FaultInjectingStore(inner, { oneRequest: true, chooseFault: (point) => (plan[point.transaction]?.[0] === point.stage ? plan[point.transaction]?.[1] : undefined) });
  const requests = store.oneRequest!;
  assert.equal(requests.embedded, true, "the inner store's flags show through");
  await assert.rejects(requests.readFlow("none"), (error) => injectedFaultOf(error) === "io-error");
  assert.deepEqual(ran, [], "a fault at begin runs nothing");
  assert.equal(await requests.readFlow("none"), undefined);
  await assert.rejects(requests.readFlow("none"), (error) => injectedFaultOf(error) === "commit-outcome-unknown");
  assert.deepEqual(ran, ["readFlow", "readFlow"], "a lost reply comes after the request ran");
  assert.equal(store.transactionCount, 3);
  assert.deepEqual(store.injected, { "busy": 0, "io-error": 1, "disk-full": 0, "connection-reset": 0, "commit-outcome-unknown": 1 });
});

void test("a failed method call ends its transaction: later calls fail and nothing commits, even when the work catches the error", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const failSecondWrite = (point: { stage: string; method: string | undefined; calls: readonly unknown[] }) =>
    point.stage === "method" && point.method === "writeAttribute" && point.calls.length === 1 ? "connection-reset" as const : undefined;
  const work = (store: Store) => store.transaction(async (transaction) => {
    await transaction.writeAttribute("flow-1", "Notes", "first", "1");
    await transaction.writeAttribute("flow-1", "Notes", "second", "1").catch(() => undefined);
    return transaction.readAttribute("flow-1", "Notes", "first");
  });
  const ending = new FaultInjectingStore(temporary.store, { chooseFault: failSecondWrite });
  await assert.rejects(work(ending), (error) => injectedFaultOf(error) === "connection-reset");
  assert.equal(await readBack(temporary.store, "first"), undefined);

  // As SQLite may after a failed statement: the transaction carries on without the failed call.
  const carryingOn = new FaultInjectingStore(temporary.store, { chooseFault: failSecondWrite, methodFaultEndsTransaction: false });
  assert.equal(await work(carryingOn), "1");
  assert.equal(await readBack(temporary.store, "first"), "1");
  assert.equal(await readBack(temporary.store, "second"), undefined);
});

void test("seeded method faults fail single calls and never lose the commit reply", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const store = new FaultInjectingStore(temporary.store, { seed: 3, transactionFaultRate: 0, methodFaultRate: 0.3, faults: ["busy", "commit-outcome-unknown"] });
  const outcomes = new Set<StoreFaultKind | "ok">();
  for (let index = 0; index < 50; index++) outcomes.add(await writeOnce(store, `method-${index}`));
  assert.deepEqual(outcomes, new Set(["ok", "busy"]));
  assert.equal(store.injected["commit-outcome-unknown"], 0);
});

void test("injecting = false stops every fault at once; the counters keep what was injected", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const store = new FaultInjectingStore(temporary.store, { transactionFaultRate: 1, methodFaultRate: 1 });
  assert.notEqual(await writeOnce(store, "faulted"), "ok");
  store.injecting = false;
  for (let index = 0; index < 20; index++) assert.equal(await writeOnce(store, `clean-${index}`), "ok");
  assert.equal(store.injectedTotal, 1);
  store.injecting = true;
  assert.notEqual(await writeOnce(store, "faulted-again"), "ok");
});

void test("injected errors look like the driver's: node:sqlite for SQLite, pg for PostgreSQL", () => {
  const busy = storeFaultError("busy", "sqlite") as Error & Record<string, unknown>;
  assert.equal(busy.message, "database is locked");
  assert.deepEqual([busy["code"], busy["errcode"], busy["errstr"]], ["ERR_SQLITE_ERROR", 5, "database is locked"]);
  assert.equal((storeFaultError("io-error", "sqlite") as Error & { errcode?: number }).errcode, 10);
  assert.equal((storeFaultError("disk-full", "sqlite") as Error & { errcode?: number }).errcode, 13);
  const reset = storeFaultError("connection-reset", "postgres") as Error & Record<string, unknown>;
  assert.deepEqual([reset.message, reset["code"], reset["syscall"]], ["read ECONNRESET", "ECONNRESET", "read"]);
  assert.equal((storeFaultError("disk-full", "postgres") as Error & { code?: string }).code, "53100");
  assert.equal(storeFaultError("commit-outcome-unknown", "postgres").message, "Connection terminated unexpectedly");
  assert.equal(injectedFaultOf(storeFaultError("io-error", "postgres")), "io-error");
  assert.equal(injectedFaultOf(new Error("database is locked")), undefined);
});

void test("bad options are refused with an error that names the value", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const refused = (options: ConstructorParameters<typeof FaultInjectingStore>[1], pattern: RegExp) =>
    assert.throws(() => new FaultInjectingStore(temporary.store, options), (error) => InvalidInputError.isInstance(error) && pattern.test(error.message));
  refused({ transactionFaultRate: 1.5 }, /transactionFaultRate 1\.5 is invalid/);
  refused({ methodFaultRate: -0.1 }, /methodFaultRate -0\.1 is invalid/);
  refused({ seed: 0.5 }, /seed 0\.5 is invalid/);
  refused({ faults: [] }, /faults \[\] are invalid/);
  refused({ faults: ["busy", "power-cut" as StoreFaultKind] }, /"power-cut".*choose one or more of busy/);
  const misplaced = new FaultInjectingStore(temporary.store, { chooseFault: (point) => (point.stage === "begin" ? "commit-outcome-unknown" : undefined) });
  await assert.rejects(misplaced.transaction(async () => undefined), /commit-outcome-unknown at stage begin/);
});
