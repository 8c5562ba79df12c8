import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { attribute } from "../attribute/attribute.ts";
import { Client } from "../client/client.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineFlow } from "../flow/flow.ts";
import { defineStep } from "../step/step.ts";
import { Worker } from "../worker/worker.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { SqliteStore } from "./sqlite-store.ts";

describe("SQLite stores on one file in one process", () => {
  it("share one connection: a Worker on one and a Client on another never stall each other", { timeout: 300_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), "perdure-shared-"));
    const path = join(folder, "shared.db");
    const count = attribute<number>("Count");
    const Tick = defineStep("Tick", {
      execute: (context) => {
        const next = (context.read(count) ?? 0) + 1;
        context.write(count, next);
        return next < 50 ? moveTo("Tick") : completeFlow();
      },
    });
    const flow = defineFlow({ type: "SharedTicks", start: "Tick", steps: [Tick], persistence: { count } });
    // The default busy timeout (10 s): two connections in one process used to wait it out, then fail.
    const workerStore = SqliteStore.open({ path, durability: "process-crash-safe" });
    const clientStore = SqliteStore.open({ path, durability: "process-crash-safe" });
    const worker = new Worker({ store: workerStore, flows: [flow] });
    try {
      await worker.start();
      const client = new Client({ store: clientStore });
      const startedAt = Date.now();
      for (let index = 0; index < 10; index += 1) await client.start(flow, `shared-${index}`);
      await pollUntil(async () => (await client.listFlows({ flowType: "SharedTicks", status: "completed" })).length === 10, { timeoutMs: 20_000, description: "every Flow to complete" });
      for (let index = 0; index < 10; index += 1) assert.deepEqual(await client.getAttributes(`shared-${index}`, count), [50]);
      // A stall would show as the busy timeout, 10 s; the Worker's wake-ups reach it through the shared connection.
      assert.ok(Date.now() - startedAt < 10_000, `took ${Date.now() - startedAt} ms`);
      await clientStore.close();
      // The other store keeps the connection open.
      assert.equal((await new Client({ store: workerStore }).describe("shared-0")).status, "completed");
    } finally {
      await worker.close();
      await workerStore.close();
      await clientStore.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("refuses a second store with other connection settings, naming them", () => {
    const folder = mkdtempSync(join(tmpdir(), "perdure-shared-"));
    const path = join(folder, "shared.db");
    const first = SqliteStore.open({ path, durability: "full" });
    try {
      assert.throws(() => SqliteStore.open({ path, durability: "process-crash-safe" }), /already open in this process with durability "full" and busyTimeoutMs 10000/);
    } finally {
      void first.close().then(() => rmSync(folder, { recursive: true, force: true }));
    }
  });
});
