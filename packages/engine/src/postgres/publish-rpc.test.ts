/**
 * Migration 0014 against the general path: an RPC whose plan is publishes
 * (`RpcSpec.publishes`) as one request leaves exactly the rows, replies and
 * errors of the handler's transaction; and the claim no longer casts
 * movement options jsonb cannot hold.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeMap } from "../attribute/attribute.ts";
import { channel } from "../channel/channel.ts";
import { Client } from "../client/client.ts";
import { received } from "../condition/condition.ts";
import { defineFlow } from "../flow/flow.ts";
import { claimCatalogOf } from "../worker/one-request-commit.ts";
import { completeFlow } from "../step/decision.ts";
import { rpc } from "../rpc/rpc.ts";
import { defineStep } from "../step/step.ts";
import { lockHolder, runPublishRpcCalls } from "../testing/one-request-fixtures/publish-rpc.ts";
import { pollUntil } from "../testing/poll-until.ts";
import { Worker } from "../worker/worker.ts";
import { createTemporaryPostgresSchema, postgresTestSkip, testDatabaseUrl } from "./temporary-postgres-schema.ts";

const url = testDatabaseUrl();
const skip = postgresTestSkip(url);

/** The rows a run leaves, compared between the two paths. */
const comparedRows = {
  flows: `SELECT flow_id, flow_type, status, input, output, error, next_seq FROM flows ORDER BY flow_id`,
  executions: `SELECT flow_id, execution_id, seq, step_type, input, status, attempt, conditions, movement_options FROM executions ORDER BY flow_id, seq`,
  attributes: `SELECT flow_id, name, key, value FROM attributes ORDER BY flow_id, name, key`,
  history: `SELECT flow_id, seq, execution_id, step_type, method, status, attempt, outcome, error FROM history ORDER BY flow_id, seq`,
  // Message IDs, publish times and wait results hold the commit time; the rest does not.
  messages: `SELECT flow_id, seq, channel, key, value FROM messages ORDER BY flow_id, seq`,
  locks: `SELECT * FROM locks ORDER BY flow_id, name`,
};

void test("an RPC's planned publishes in one request leave the rows, replies and errors of the handler's transaction", { skip, timeout: 300_000 }, async (t) => {
  const run = async (oneRequest: boolean) => {
    const temporary = createTemporaryPostgresSchema(url!);
    t.after(() => temporary.dispose());
    const store = await temporary.open();
    const replies = { published: 0, fallback: 0 };
    const operations = store.oneRequest;
    assert.ok(operations?.publishRpc !== undefined, "the schema has migration 0014");
    if (oneRequest) {
      const publishRpc = operations.publishRpc;
      operations.publishRpc = async (request) => {
        const reply = await publishRpc(request);
        replies[reply.outcome] += 1;
        return reply;
      };
    } else {
      operations.publishRpc = undefined;
    }
    try {
      const outcomes = await runPublishRpcCalls(store, lockHolder(temporary.connectionString, temporary.schema));
      return { outcomes, replies, rows: await temporary.rows(comparedRows) };
    } finally {
      await store.close();
    }
  };
  const general = await run(false);
  const oneRequest = await run(true);
  assert.deepEqual(general.replies, { published: 0, fallback: 0 });
  // pub-1: 8 calls publish; 2 full rooms and the held lock fall back. pub-2: the stored U+0000 and the
  // stopped and missing Flows fall back; the texts jsonb cannot hold never leave the process. pub-3: 30.
  assert.deepEqual(oneRequest.replies, { published: 38, fallback: 6 });
  assert.deepEqual(oneRequest.outcomes, general.outcomes);
  assert.deepEqual(oneRequest.rows, general.rows);
  // The calls did what the scenario means.
  const outcomes = general.outcomes.join("\n");
  assert.match(outcomes, /send "c{30}": InvalidInputError: Flow pub-1 would hold 72 bytes/);
  assert.match(outcomes, /send "e": InvalidInputError: Flow pub-1 has 4 messages waiting/);
  assert.match(outcomes, /send "": false/);
  assert.match(outcomes, /aside "y": RpcLockConflictError/);
  assert.match(outcomes, /send "late": FlowNotRunningError/);
  assert.match(outcomes, /send "nobody": FlowNotFoundError/);
  const seen = general.rows["attributes"]!.filter((row) => (row as { name: string }).name === "Seen").map((row) => (row as { flow_id: string; value: string }));
  assert.deepEqual(seen.slice(0, 2).map((row) => [row.flow_id, JSON.parse(row.value) as string]), [
    ["pub-1", `[a|bb][${"é".repeat(20)}|c]`],
    ["pub-2", "[ok|cut \ud83d]"],
  ]);
  const trimmed = general.rows["history"]!.filter((row) => (row as { flow_id: string }).flow_id === "pub-3");
  assert.ok(trimmed.length < 20, `pub-3 kept ${trimmed.length} history entries (retention 4, trimmed every 64 sequence numbers)`);
  assert.ok(Number((general.rows["flows"]!.find((row) => (row as { flow_id: string }).flow_id === "pub-3") as { next_seq: string }).next_seq) > 64);
});

const tagged = attributeMap<string>("Tagged");
const GuardLoadedStep = defineStep("GuardLoaded", {
  load: [tagged.instance("static")],
  execute: (context) => completeFlow(`loaded ${String(context.read(tagged.instance("nul \u0000")))} ${String(context.read(tagged.instance("cut \ud83d")))}`),
});
const guardFlow = defineFlow({
  type: "ClaimGuard",
  steps: [GuardLoadedStep],
  persistence: { tagged },
  rpcs: {
    // Movement options whose load keys jsonb cannot hold: U+0000, and a lone surrogate.
    queue: rpc({ name: "queue", handler: (context) => context.moveTo("GuardLoaded", {}, { load: [tagged.instance("nul \u0000"), tagged.instance("cut \ud83d")] }) }),
  },
});

void test("a claim stops at movement options jsonb cannot hold, where it failed before, and the general claim runs the task", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  const store = await temporary.open();
  t.after(() => store.close());
  const operations = store.oneRequest;
  assert.ok(operations !== undefined && operations.claimsReadLoads);
  const client = new Client({ store });
  assert.deepEqual(await client.start(guardFlow, "guard-1", {}), { created: true });
  await client.invokeRPC(guardFlow.queue, "guard-1", undefined);
  assert.deepEqual((await client.describe("guard-1")).executions.map((execution) => [execution.stepType, execution.status]), [["GuardLoaded", "ready"]]);
  // The store's claim with the long catalog (whose entry admits a load selection alone): 0010's cast failed here.
  const { flowTypes, catalog } = claimCatalogOf(new Map([[guardFlow.flowType, guardFlow]]), true, true);
  const reply = await operations.claimTasks({ workerId: "probe", now: store.clock.now(), claim: { flowTypes, catalog, limit: 4 } });
  assert.deepEqual({ claims: reply.claims.length, stopped: reply.claimStopped }, { claims: 0, stopped: true });
  // A Worker claims it the general way and runs it with the movement's loads.
  const worker = new Worker({ store, flows: [guardFlow], concurrency: 1 });
  await worker.start();
  try {
    await pollUntil(async () => (await client.describe("guard-1")).status === "completed", { timeoutMs: 120_000, description: "guard-1 to complete" });
  } finally {
    await worker.close();
  }
  assert.equal((await client.describe("guard-1")).output, "loaded undefined undefined");
});

const doorbell = channel<string>("Doorbell");
const AnswerDoorStep = defineStep("AnswerDoor", {
  waitUntil: () => received(doorbell),
  execute: () => completeFlow("answered"),
});
const doorFlow = defineFlow({
  type: "Door",
  start: "AnswerDoor",
  steps: [AnswerDoorStep],
  persistence: { doorbell },
  rpcs: {
    ring: rpc<string, boolean>({
      name: "ring",
      handler: async (context, who) => {
        await context.publish(doorbell, who);
        return true;
      },
      publishes: (_context, who) => ({ messages: [{ channel: doorbell, message: who }], output: true }),
    }),
  },
});

void test("a publish RPC that readies a wait wakes a Worker of another store from its own request (migration 0021)", { skip, timeout: 300_000 }, async (t) => {
  const temporary = createTemporaryPostgresSchema(url!);
  t.after(() => temporary.dispose());
  // The Worker's store polls once a minute: only a wake-up gets the readied Step claimed within the wait below.
  const workerStore = await temporary.open({ pollIntervalMs: 60_000 });
  const clientStore = await temporary.open();
  const notifies: string[] = [];
  const wakeChannel = (clientStore as unknown as { wakeChannel: { options: { notify(channel: string, payloads: string[]): Promise<void> } } }).wakeChannel;
  const notify = wakeChannel.options.notify.bind(wakeChannel.options);
  wakeChannel.options.notify = (channelName, payloads) => {
    notifies.push(...payloads);
    return notify(channelName, payloads);
  };
  const worker = new Worker({ store: workerStore, flows: [doorFlow] });
  await worker.start();
  t.after(() => worker.close());
  const client = new Client({ store: clientStore });
  await client.start(doorFlow, "door");
  await pollUntil(async () => ((await client.describe("door")).executions.some((execution) => execution.status === "waiting") ? true : undefined), { description: "the door to wait" });
  notifies.length = 0;
  assert.equal(await client.invokeRPC(doorFlow.ring, "door", "a neighbour"), true);
  assert.equal((await client.waitForFlow("door", { timeoutMs: 30_000 })).output, "answered");
  assert.deepEqual(notifies.filter((payload) => payload.includes("\"tasks\"")), [], "the RPC sent no NOTIFY statement of its own");
});
