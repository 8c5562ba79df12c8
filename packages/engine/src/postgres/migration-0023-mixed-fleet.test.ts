/**
 * A rolling upgrade to migration 0023 (from the review of 0023, rev2). One process
 * opened its store before the schema had 0023 (plain claims, no
 * `compactClaims`), another after (compact claims); both run Workers and
 * Clients on the same Flows, with one-request publish RPCs, waits with a
 * Timer, locks and static loads, until every Flow completes as it should.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { attribute } from "../attribute/attribute.ts";
import { channel } from "../channel/channel.ts";
import { Client } from "../client/client.ts";
import { anyOf, received, timer } from "../condition/condition.ts";
import { defineFlow } from "../flow/flow.ts";
import { rpc } from "../rpc/rpc.ts";
import { completeFlow, moveTo } from "../step/decision.ts";
import { defineStep } from "../step/step.ts";
import { Worker } from "../worker/worker.ts";
import { applyMigrations, postgresMigrations } from "./migrations/migrations.ts";
import { leanerClaimsAndCommitsMigration } from "./migrations/0023-leaner-claims-and-commits.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const skip = postgresTestSkip(testDatabaseUrl());

const inbox = channel<string>("Inbox");
const count = attribute<number>("Count");
const texts = attribute<string>("Texts");

const StartStep = defineStep("Start", {
  execute: (context) => {
    context.write(count, 0);
    context.write(texts, "");
    return moveTo("Listen", {});
  },
});
const ListenStep = defineStep("Listen", {
  executeOptions: { locks: [count] },
  load: [inbox],
  waitUntil: () => anyOf(timer("give-up", { afterMs: 600_000 }), received(inbox, { exactly: 1 })),
  execute: (context) => {
    const got = context.consumed(inbox).map((entry) => entry.message);
    const n = (context.read(count) ?? 0) + got.length;
    context.write(count, n);
    context.write(texts, `${context.read(texts) ?? ""}${got.join("")}`);
    return n >= 4 ? completeFlow({ n, texts: context.read(texts) }) : moveTo("Listen", {});
  },
});
const mixedFlow = defineFlow({
  type: "Rev2Mixed",
  start: "Start",
  steps: [StartStep, ListenStep],
  persistence: { inbox, count, texts },
  rpcs: {
    send: rpc<string, boolean>({
      name: "send",
      locks: [count],
      handler: async (context, text) => {
        await context.publish(inbox, text);
        return true;
      },
      publishes: (_context, text) => ({ messages: [{ channel: inbox, message: text }], output: true }),
    }),
  },
});

void test("Workers and Clients of a process older than 0023 and of one with it share a schema and every Flow completes", { skip, timeout: 240_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const sql = new pg.Client({ connectionString: temporary.connectionString });
  await sql.connect();
  t.after(() => sql.end());
  const quoted = pg.escapeIdentifier(temporary.schema);
  await applyMigrations(sql, temporary.schema, quoted, postgresMigrations.filter((migration) => migration !== leanerClaimsAndCommitsMigration));
  const old = await temporary.open({ migrate: false });
  t.after(() => old.close());
  await applyMigrations(sql, temporary.schema, quoted);
  const now = await temporary.open({ migrate: false });
  t.after(() => now.close());
  // Which claim function each process calls.
  const calls = { old: { compact: 0, keyed: 0 }, now: { compact: 0, keyed: 0 } };
  for (const [name, store] of [["old", old], ["now", now]] as const) {
    const operations = store.oneRequest!;
    const claimTasks = operations.claimTasks.bind(operations);
    operations.claimTasks = async (claim) => {
      const reply = await claimTasks(claim);
      calls[name][(operations as unknown as { compactClaims: boolean }).compactClaims ? "compact" : "keyed"] += 1;
      return reply;
    };
  }
  const workers = [new Worker({ store: old, flows: [mixedFlow], concurrency: 3 }), new Worker({ store: now, flows: [mixedFlow], concurrency: 3 })];
  for (const worker of workers) await worker.start();
  t.after(async () => {
    for (const worker of workers) await worker.close();
  });
  const clients = [new Client({ store: old }), new Client({ store: now })];
  const flowIds = Array.from({ length: 12 }, (_, index) => `mixed-${index}`);
  for (const [index, flowId] of flowIds.entries()) await clients[index % 2]!.start(mixedFlow, flowId, {});
  for (const letter of ["a", "b", "c", "d"]) {
    await Promise.all(flowIds.map(async (flowId, index) => {
      for (;;) {
        try {
          return await clients[(index + letter.charCodeAt(0)) % 2]!.invokeRPC(mixedFlow.send, flowId, letter);
        } catch (error) {
          if ((error as Error).name !== "RpcLockConflictError") throw error;
        }
      }
    }));
  }
  for (const flowId of flowIds) {
    const description = await clients[0]!.waitForFlow(flowId, { timeoutMs: 120_000 });
    assert.equal(description.status, "completed", flowId);
    const output = description.output as { n: number; texts: string };
    assert.equal(output.n, 4, flowId);
    assert.equal([...output.texts].sort().join(""), "abcd", flowId);
  }
  for (const worker of workers) await worker.close();
  assert.ok(calls.old.keyed > 0 && calls.now.compact > 0 && calls.old.compact === 0 && calls.now.keyed === 0, JSON.stringify(calls));
  assert.equal((old.oneRequest as unknown as { compactClaims: boolean }).compactClaims, false);
  assert.equal((now.oneRequest as unknown as { compactClaims: boolean }).compactClaims, true);
  console.log(JSON.stringify(calls));
});
