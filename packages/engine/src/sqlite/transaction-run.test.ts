import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { attribute } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { defineFlow } from "../flow/flow.ts";
import { rpc } from "../rpc/rpc.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import type { FlowRow } from "../store/store.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { SqliteStore } from "./sqlite-store.ts";
import { SqliteTransactionConflict } from "./sqlite-transaction-conflict.ts";

function openStore(t: TestContext): { store: SqliteStore; path: string } {
  const folder = mkdtempSync(join(tmpdir(), "perdure-run-"));
  const path = join(folder, "engine.db");
  const store = SqliteStore.open({ path, durability: "process-crash-safe" });
  t.after(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { store, path };
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  return { opened, open };
}

function flowRow(flowId: string): FlowRow {
  return { flowId, flowType: "Test", status: "running", input: "null", output: null, error: null, requestId: null, createdAt: 1, updatedAt: 1, nextSeq: 1 };
}

async function readCount(store: SqliteStore, flowId = "counter"): Promise<number> {
  return Number(await store.transaction((transaction) => transaction.readAttribute(flowId, "Count", "")) ?? 0);
}

describe("SQLite transactions that wait on something other than the store", { timeout: 300_000 }, () => {
  it("hold no write lock while they wait, read their own writes after it, and commit them together", async (t) => {
    const { store, path } = openStore(t);
    const waiting = gate();
    let runs = 0;
    let readBack: string | undefined;
    const committed = store.transaction(async (transaction) => {
      runs += 1;
      await transaction.writeAttribute("flow-1", "First", "", "1");
      await waiting.opened;
      readBack = await transaction.readAttribute("flow-1", "First", "");
      await transaction.writeAttribute("flow-1", "Second", "", "2");
      return "done";
    });
    await delay(20);
    // Another connection on the file (as another process would) takes the write lock at once and sees nothing of the waiting transaction.
    const other = new DatabaseSync(path, { timeout: 0 });
    other.exec("BEGIN IMMEDIATE");
    assert.equal(other.prepare("SELECT COUNT(*) AS count FROM attributes WHERE flow_id = 'flow-1'").get()?.["count"], 0);
    other.prepare("INSERT INTO attributes (flow_id, name, key, value) VALUES ('flow-2', 'Other', '', '3')").run();
    other.exec("COMMIT");
    other.close();
    // And this process's other transactions go ahead of it.
    await store.transaction((transaction) => transaction.writeAttribute("flow-3", "Other", "", "4"));
    waiting.open();
    assert.equal(await committed, "done");
    assert.equal(runs, 1, "nothing it read changed, so it ran once");
    assert.equal(readBack, "1");
    const values = await store.transaction(async (transaction) => [
      await transaction.readAttribute("flow-1", "First", ""),
      await transaction.readAttribute("flow-1", "Second", ""),
      await transaction.readAttribute("flow-2", "Other", ""),
      await transaction.readAttribute("flow-3", "Other", ""),
    ]);
    assert.deepEqual(values, ["1", "2", "3", "4"]);
  });

  it("run again when a row they read changed while they waited, so no update is lost", async (t) => {
    const { store } = openStore(t);
    const first = gate();
    const second = gate();
    const runs = { first: 0, second: 0 };
    const increment = (name: "first" | "second", waitFor: Promise<void>) => store.transaction(async (transaction) => {
      runs[name] += 1;
      const count = Number(await transaction.readAttribute("counter", "Count", "") ?? 0);
      await waitFor;
      await transaction.writeAttribute("counter", "Count", "", String(count + 1));
    });
    const firstDone = increment("first", first.opened);
    const secondDone = increment("second", second.opened);
    await delay(20);
    second.open();
    await secondDone;
    first.open();
    await firstDone;
    assert.equal(await readCount(store), 2);
    assert.deepEqual(runs, { first: 2, second: 1 });
  });

  it("reproduce a statement's error when they take the lock back", async (t) => {
    const { store } = openStore(t);
    await store.transaction((transaction) => transaction.insertFlow(flowRow("taken")));
    let runs = 0;
    await store.transaction(async (transaction) => {
      runs += 1;
      await assert.rejects(transaction.insertFlow(flowRow("taken")), /UNIQUE constraint failed/);
      await delay(10);
      await transaction.writeAttribute("taken", "Note", "", "\"after the refused insert\"");
    });
    assert.equal(runs, 1);
    assert.equal(await store.transaction((transaction) => transaction.readAttribute("taken", "Note", "")), "\"after the refused insert\"");
  });

  it("commit nothing when the work throws after it waited", async (t) => {
    const { store } = openStore(t);
    await assert.rejects(store.transaction(async (transaction) => {
      await transaction.writeAttribute("flow-1", "Doomed", "", "1");
      await delay(10);
      throw new Error("the handler changed its mind");
    }), /the handler changed its mind/);
    assert.equal(await store.transaction((transaction) => transaction.readAttribute("flow-1", "Doomed", "")), undefined);
  });

  it("give up after five runs whose reads kept changing, with SqliteTransactionConflict, and commit nothing", async (t) => {
    const { store } = openStore(t);
    let runs = 0;
    const error = await store.transaction(async (transaction) => {
      runs += 1;
      const count = Number(await transaction.readAttribute("counter", "Count", "") ?? 0);
      // Another transaction changes what this one read while it waits for it.
      await store.transaction((inner) => inner.writeAttribute("counter", "Count", "", String(count + 100)));
      await transaction.writeAttribute("counter", "Marker", "", "1");
    }).then(() => undefined, (thrown: unknown) => thrown);
    assert.ok(error instanceof SqliteTransactionConflict, `got ${String(error)}`);
    assert.match(error.message, /ran 5 times.*keep RPC handlers to store calls/);
    assert.equal(runs, 5);
    assert.equal(await readCount(store), 500);
    assert.equal(await store.transaction((transaction) => transaction.readAttribute("counter", "Marker", "")), undefined);
  });

  it("let a Worker in the same process run and commit Steps while an RPC handler waits", async (t) => {
    const { store } = openStore(t);
    const count = attribute<number>("Count");
    const note = attribute<string>("Note");
    const handlerWaits = gate();
    const Tick = defineStep("Tick", {
      execute: (context) => {
        const next = (context.read(count) ?? 0) + 1;
        context.write(count, next);
        return next < 20 ? moveTo("Tick") : completeFlow();
      },
    });
    const flow = defineFlow({
      type: "TicksBesideAnRpc",
      steps: [Tick],
      persistence: { count, note },
      rpcs: {
        slowNote: rpc<string, string>({
          name: "slowNote",
          handler: async (context, text) => {
            await context.write(note, text);
            await handlerWaits.opened;
            return text;
          },
        }),
        tick: rpc({ name: "tick", handler: (context) => { context.moveTo("Tick"); return null; } }),
      },
    });
    const worker = new Worker({ store, flows: [flow] });
    await worker.start();
    try {
      const client = new Client({ store });
      await client.start(flow, "waiting-rpc");
      await client.start(flow, "ticking");
      const slow = client.invokeRPC(flow.slowNote, "waiting-rpc", "after the wait");
      await client.invokeRPC(flow.tick, "ticking");
      await pollUntil(async () => (await client.describe("ticking")).status === "completed", { description: "the Steps to commit while the RPC waits" });
      assert.deepEqual(await client.getAttributes("waiting-rpc", note), [undefined], "the waiting RPC has committed nothing yet");
      handlerWaits.open();
      assert.equal(await slow, "after the wait");
      assert.deepEqual(await client.getAttributes("waiting-rpc", note), ["after the wait"]);
      assert.deepEqual(await client.getAttributes("ticking", count), [20]);
    } finally {
      await worker.close();
    }
  });
});
