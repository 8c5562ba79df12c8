import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { SqliteStore, type SqliteDurability } from "./sqlite-store.ts";

function openStore(t: TestContext, durability: SqliteDurability): { store: SqliteStore; path: string } {
  const folder = mkdtempSync(join(tmpdir(), "perdure-group-"));
  const path = join(folder, "engine.db");
  const store = SqliteStore.open({ path, durability });
  t.after(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { store, path };
}

/** Counts the COMMIT statements this process sends to SQLite while `work` runs. */
async function countCommits<TResult>(work: () => Promise<TResult>): Promise<{ result: TResult; commits: number }> {
  const prototype = DatabaseSync.prototype as unknown as { exec: (sql: string) => void };
  const original = prototype.exec;
  let commits = 0;
  prototype.exec = function countingExec(this: DatabaseSync, sql: string): void {
    if (sql === "COMMIT") commits += 1;
    original.call(this, sql);
  };
  try {
    const result = await work();
    return { result, commits };
  } finally {
    prototype.exec = original;
  }
}

/** Reads an attribute through a connection of its own, which sees only committed writes. */
function readCommitted(path: string, flowId: string, name: string): string | undefined {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const row = database.prepare("SELECT value FROM attributes WHERE flow_id = ? AND name = ? AND key = ''").get(flowId, name) as { value: string } | undefined;
    return row?.value;
  } finally {
    database.close();
  }
}

describe("SQLite group commit", { timeout: 300_000 }, () => {
  for (const durability of ["full", "process-crash-safe"] as const) {
    it(`(${durability}) transactions that gather share one COMMIT, and those that fail (the first one too) leave the others' writes`, async (t) => {
      const { store, path } = openStore(t, durability);
      // Asked for at different microtask depths of one turn, as Step handlers finish. Under full the
      // group waits for the turn's end; under process-crash-safe the turn's first transaction starts at
      // once, and the others wait for the turn's end.
      const hops = 20;
      const { result: outcomes, commits } = await countCommits(() => Promise.allSettled(Array.from({ length: 8 }, async (_unused, index) => {
        for (let hop = 0; hop < index * hops; hop++) await Promise.resolve();
        return store.transaction(async (transaction) => {
          await transaction.writeAttribute(`flow-${index}`, "Value", "", String(index));
          if (index === 0 || index === 3) throw new Error(`member ${index} fails after writing`);
          return index;
        });
      })));
      if (durability === "full") assert.equal(commits, 1);
      else assert.ok(commits <= 2, `${commits} COMMITs: at most the turn's first transaction alone, then one for the rest`);
      outcomes.forEach((outcome, index) => {
        if (index === 0 || index === 3) {
          assert.equal(outcome.status, "rejected");
          assert.match(String((outcome as PromiseRejectedResult).reason), new RegExp(`member ${index} fails`));
        } else {
          assert.deepEqual(outcome, { status: "fulfilled", value: index });
        }
      });
      for (let index = 0; index < 8; index++) assert.equal(readCommitted(path, `flow-${index}`, "Value"), index === 0 || index === 3 ? undefined : String(index));
    });
  }

  it("(process-crash-safe) a lone transaction starts at once, without waiting for the end of the turn", async (t) => {
    const { store } = openStore(t, "process-crash-safe");
    await store.transaction(async (transaction) => transaction.writeAttribute("warm-up", "Value", "", "0"));
    // A later turn, with nothing else in flight.
    await new Promise((resolve) => setImmediate(resolve));
    let turnEnded = false;
    setImmediate(() => {
      turnEnded = true;
    });
    let startedInTurn: boolean | undefined;
    await store.transaction(async (transaction) => {
      startedInTurn = !turnEnded;
      await transaction.writeAttribute("lone", "Value", "", "1");
    });
    assert.equal(startedInTurn, true);
  });

  it("hands a member its result only once the group's COMMIT made it visible to other connections", async (t) => {
    const { store, path } = openStore(t, "full");
    const seenOnResult: (string | undefined)[] = [];
    await Promise.all(Array.from({ length: 4 }, (_unused, index) => store.transaction(async (transaction) => {
      await transaction.writeAttribute("flow", `Member${index}`, "", String(index));
    }).then(() => {
      seenOnResult.push(readCommitted(path, "flow", `Member${index}`));
    })));
    assert.deepEqual(seenOnResult.sort(), ["0", "1", "2", "3"]);
  });

  it("a member that waits on something else lets go without taking the earlier members' writes with it", async (t) => {
    const { store, path } = openStore(t, "process-crash-safe");
    let firstSettledWhileSecondWaited = false;
    let secondWaiting = true;
    const first = store.transaction(async (transaction) => {
      await transaction.writeAttribute("flow-a", "Value", "", "a");
    }).then(() => {
      firstSettledWhileSecondWaited = secondWaiting && readCommitted(path, "flow-a", "Value") === "a";
    });
    const second = store.transaction(async (transaction) => {
      await transaction.writeAttribute("flow-b", "Before", "", "b");
      await delay(50);
      secondWaiting = false;
      await transaction.writeAttribute("flow-b", "After", "", "b");
      return transaction.readAttribute("flow-a", "Value", "");
    });
    const [, secondRead] = await Promise.all([first, second]);
    assert.equal(firstSettledWhileSecondWaited, true);
    assert.equal(secondRead, "a");
    assert.equal(readCommitted(path, "flow-b", "Before"), "b");
    assert.equal(readCommitted(path, "flow-b", "After"), "b");
  });
});
