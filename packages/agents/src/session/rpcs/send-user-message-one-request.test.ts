/**
 * `send_user_message` on PostgreSQL in one request (migration 0014's
 * `perdure_publish_rpc`, through the RPC's `publishes` plan) against the
 * handler's transaction: the same calls on two fresh schemas leave the same
 * rows and get the same replies and errors: a message that completes the
 * session's wait for one, messages that queue, both bounds of the queue, a
 * blank text, a text over the size limit, plan mode while it is off, a
 * client message ID, and a stopped session.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporaryPostgresSchema, pollUntil, postgresTestSkip, testDatabaseUrl } from "@perdure/engine/testing";
import { ScriptedAgentRunner } from "../../testing/scripted-agent-runner.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";
import type { SendUserMessageInput } from "./session-rpcs.ts";

const url = testDatabaseUrl();

/** Times differ between runs (message IDs, publish and send times, wait results): each becomes a placeholder. */
function withoutTimes(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, "<iso>").replace(/\d{13}/g, "<ms>"));
}

/** The rows a run leaves, compared between the two paths. */
const comparedRows = {
  flows: `SELECT flow_id, status, next_seq FROM flows ORDER BY flow_id`,
  executions: `SELECT flow_id, seq, step_type, status, attempt, conditions, wait_result, movement_options FROM executions ORDER BY flow_id, seq`,
  attributes: `SELECT flow_id, name, key, value FROM attributes ORDER BY flow_id, name, key`,
  messages: `SELECT flow_id, seq, channel, key, message_id, value FROM messages ORDER BY flow_id, seq`,
};

async function run(oneRequest: boolean): Promise<{ outcomes: string[]; beforeStop: unknown; rows: unknown; published: number }> {
  const temporary = createTemporaryPostgresSchema(url!);
  const store = await temporary.open();
  let published = 0;
  try {
    const operations = store.oneRequest;
    assert.ok(operations?.publishRpc !== undefined, "the schema has migration 0014");
    if (oneRequest) {
      const publishRpc = operations.publishRpc;
      operations.publishRpc = async (request) => {
        const reply = await publishRpc(request);
        if (reply.outcome === "published") published += 1;
        return reply;
      };
    } else {
      operations.publishRpc = undefined;
    }
    const flow = createAgentSessionFlow(new ScriptedAgentRunner(() => ({ text: "ok" }), {}), "OneRequestSend", {
      maxQueuedUserMessages: 2,
      maxQueuedUserMessageBytes: 40,
      maxUserMessageBytes: 40,
    });
    const client = new Client({ store });
    const outcomes: string[] = [];
    const send = async (input: SendUserMessageInput): Promise<void> => {
      try {
        outcomes.push(`${JSON.stringify(input)}: ${String(await client.invokeRPC(flow.sendUserMessage, "session-1", input))}`);
      } catch (error) {
        outcomes.push(`${JSON.stringify(input)}: ${(error as Error).name}: ${(error as Error).message}`);
      }
    };
    // The session's first Steps run until it waits for a message; then the Worker stops, so later messages queue.
    const worker = new Worker({ store, flows: [flow], concurrency: 2 });
    await worker.start();
    try {
      await client.start(flow, "session-1", {});
      await pollUntil(async () => (await client.describe("session-1")).executions.some((execution) => execution.stepType === "AwaitUserMessage" && execution.status === "waiting"), { timeoutMs: 120_000, description: "the session to wait for a message" });
    } finally {
      await worker.close();
    }
    await send({ text: "first, which the waiting Step takes", clientMessageId: "client-1" });
    await send({ text: "é".repeat(10) });
    await send({ text: "x".repeat(30) });
    await send({ text: "short" });
    await send({ text: "one too many" });
    await send({ text: "   " });
    await send({ text: "y".repeat(41) });
    await send({ text: "a plan", planMode: true });
    // The first message waits in the ready Step's wait result; the stop below cancels that Step.
    const beforeStop = withoutTimes(await temporary.rows(comparedRows));
    await client.stop("session-1", "stopped by the test");
    await send({ text: "after the stop" });
    return { outcomes, beforeStop, rows: withoutTimes(await temporary.rows(comparedRows)), published };
  } finally {
    await store.close();
    await temporary.dispose();
  }
}

void test("send_user_message in one request leaves the rows, replies and errors of its transaction", { skip: postgresTestSkip(url), timeout: 300_000 }, async () => {
  const general = await run(false);
  const oneRequest = await run(true);
  assert.equal(general.published, 0);
  // The first message (it completes the wait), "é"×10 and "short"; the rest are refused or declined.
  assert.equal(oneRequest.published, 3);
  assert.deepEqual(oneRequest.outcomes, general.outcomes);
  assert.deepEqual(oneRequest.beforeStop, general.beforeStop);
  assert.deepEqual(oneRequest.rows, general.rows);
  const outcomes = general.outcomes.join("\n");
  assert.match(outcomes, /"x{30}"}: QueuedUserMessagesFullError: .*20 bytes of user messages waiting/);
  assert.match(outcomes, /"one too many"}: QueuedUserMessagesFullError: .*already has 2 user messages waiting/);
  assert.match(outcomes, /" {3}"}: false/);
  assert.match(outcomes, /"y{41}"}: InvalidInputError: .*41 bytes/);
  assert.match(outcomes, /"planMode":true}: false/);
  assert.match(outcomes, /"after the stop"}: FlowNotRunningError/);
  assert.match(JSON.stringify(general.beforeStop), /AwaitUserMessage","status":"ready".*client_message_id.*client-1/);
});
