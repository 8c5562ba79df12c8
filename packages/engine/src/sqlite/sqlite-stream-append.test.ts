import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StatementSync } from "node:sqlite";
import { describe, it, type TestContext } from "node:test";
import type { StreamAppend } from "../store/step-commit.ts";
import { SqliteStore } from "./sqlite-store.ts";

function openStore(t: TestContext): SqliteStore {
  const folder = mkdtempSync(join(tmpdir(), "perdure-stream-append-"));
  const store = SqliteStore.open({ path: join(folder, "engine.db"), durability: "process-crash-safe" });
  t.after(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return store;
}

/** Counts the statements on the Stream tables that SQLite runs while `work` runs. */
async function countStreamStatements<TResult>(work: () => Promise<TResult>): Promise<{ result: TResult; statements: number }> {
  const prototype = StatementSync.prototype as unknown as Record<"run" | "get" | "all", (...args: unknown[]) => unknown>;
  const originals = { run: prototype.run, get: prototype.get, all: prototype.all };
  let statements = 0;
  for (const method of ["run", "get", "all"] as const) {
    const original = originals[method];
    prototype[method] = function countingStatement(this: StatementSync, ...args: unknown[]): unknown {
      if (/\bstream_(heads|messages|usage)\b/.test(this.sourceSQL)) statements += 1;
      return original.apply(this, args);
    };
  }
  try {
    const result = await work();
    return { result, statements };
  } finally {
    Object.assign(prototype, originals);
  }
}

function message(flowId: string, stream: string, value: string, capacityBytes = 1_000): StreamAppend {
  return { flowId, flowType: "Agent", stream, value, writtenAt: 0, capacityBytes };
}

describe("SQLite Stream appends by runs of one Stream", () => {
  it("moves a Stream's head and its byte count once a run: a batch of 3 + 1 messages on two Streams runs 8 statements, not 12", async (t) => {
    const store = openStore(t);
    // The Streams' first messages insert the head and count rows; after them each run updates them.
    await store.transaction(async (transaction) => transaction.appendStreams!([message("flow", "Log", "\"0\""), message("flow", "Text", "\"0\"")]));
    const batch = [message("flow", "Log", "\"a\""), message("flow", "Log", "\"b\""), message("flow", "Log", "\"c\""), message("flow", "Text", "\"d\"")];
    const { result: indexes, statements } = await countStreamStatements(() => store.transaction(async (transaction) => transaction.appendStreams!(batch)));
    assert.deepEqual(indexes, [2, 3, 4, 2]);
    // Per run: the head's update, one insert a message, the count's update.
    assert.equal(statements, 2 + 4 + 2);
    const log = await store.transaction(async (transaction) => transaction.readStream("flow", "Log", 0, 10));
    assert.deepEqual(log.rows.map((row) => [row.index, row.value]), [[1, "\"0\""], [2, "\"a\""], [3, "\"b\""], [4, "\"c\""]]);
    assert.equal(log.lastIndex, 4);
  });

  it("keeps the same messages as appending them one by one when the run overflows the budget", async (t) => {
    const batched = openStore(t);
    const oneByOne = openStore(t);
    // 5 bytes a message (`"abc"`), a budget of 12: two messages fit.
    const values = ["\"abc\"", "\"def\"", "\"ghi\"", "\"jkl\"", "\"mno\""];
    const batchIndexes = await batched.transaction(async (transaction) => transaction.appendStreams!(values.map((value) => message("flow", "Log", value, 12))));
    const singleIndexes: number[] = [];
    for (const value of values) singleIndexes.push(await oneByOne.transaction(async (transaction) => transaction.appendStream("flow", "Agent", "Log", value, 0, 12)));
    assert.deepEqual(batchIndexes, singleIndexes);
    const read = (store: SqliteStore): Promise<unknown> => store.transaction(async (transaction) => {
      const stream = await transaction.readStream("flow", "Log", 0, 10);
      return { values: stream.rows.map((row) => [row.index, row.value]), firstIndex: stream.firstIndex, lastIndex: stream.lastIndex };
    });
    assert.deepEqual(await read(batched), { values: [[4, "\"jkl\""], [5, "\"mno\""]], firstIndex: 4, lastIndex: 5 });
    assert.deepEqual(await read(batched), await read(oneByOne));
    // A message over the budget on its own goes too, as it did one by one.
    await batched.transaction(async (transaction) => transaction.appendStreams!([message("flow", "Log", "\"too large for the budget\"", 12)]));
    assert.deepEqual(await read(batched), { values: [], firstIndex: undefined, lastIndex: 6 });
  });
});
