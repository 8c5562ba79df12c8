/**
 * A Flow whose RPCs publish through `RpcSpec.publishes`, and the calls the
 * publish-RPC equivalence test makes on it, on both PostgreSQL paths: the
 * one-request `perdure_publish_rpc` (migration 0014) and the handler's
 * transaction. The calls walk through every case the one request must leave
 * to the handler (a full room by count and by bytes, a held lock, a blank
 * text the plan declines, a stopped or missing Flow, stored messages and new
 * ones jsonb cannot hold) between calls it commits itself, waits they
 * complete among them, and enough publishes to trim history.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { attribute } from "../../attribute/attribute.ts";
import { channel, type ChannelRef } from "../../channel/channel.ts";
import { Client } from "../../client/client.ts";
import { anyOf, received } from "../../condition/condition.ts";
import { FlowNotRunningError } from "../../errors/flow-not-running-error.ts";
import { InvalidInputError } from "../../errors/invalid-input-error.ts";
import { defineFlow } from "../../flow/flow.ts";
import { rpc, type RpcContext, type RpcPublishPlan } from "../../rpc/rpc.ts";
import { moveTo } from "../../step/decision.ts";
import { defineStep } from "../../step/step.ts";
import type { Store } from "../../store/store.ts";
import { pollUntil } from "../poll-until.ts";
import { Worker } from "../../worker/worker.ts";

interface Note {
  text: string;
}

const inbox = channel<Note>("Inbox");
const aside = channel<Note>("Aside");
const guarded = attribute<number>("Guarded");
const seen = attribute<string>("Seen");

/** The bound both RPCs keep on the messages waiting in Inbox and Aside together. */
const maxMessages = 4;
const maxBytes = 64;

const room = { channels: [inbox, aside], maxMessages, maxBytes, field: "text" } satisfies RpcPublishPlan<boolean>["room"];

/** The handler: what the transaction does, refusals included (as the agent's `send_user_message`). */
async function publishWithRoom(context: RpcContext, target: ChannelRef<Note>, text: string): Promise<boolean> {
  if (context.flowStatus !== "running") throw new FlowNotRunningError(`Flow ${context.flowId} is ${context.flowStatus}`);
  if (text === "") return false;
  const waiting = [
    ...(await context.listMessages(inbox, { limit: maxMessages + 1 })),
    ...(await context.listMessages(aside, { limit: maxMessages + 1 })),
  ];
  const bytes = waiting.reduce((total, entry) => total + Buffer.byteLength(entry.message.text), 0) + Buffer.byteLength(text);
  if (waiting.length + 1 > maxMessages) throw new InvalidInputError(`Flow ${context.flowId} has ${waiting.length} messages waiting`);
  if (bytes > maxBytes) throw new InvalidInputError(`Flow ${context.flowId} would hold ${bytes} bytes`);
  await context.publish(target, { text });
  return true;
}

/** The plan: the same message while the room holds; a blank text is the handler's. */
function planOf(target: ChannelRef<Note>, text: string): RpcPublishPlan<boolean> | undefined {
  if (text === "") return undefined;
  return { messages: [{ channel: target, message: { text } }], output: true, room };
}

const ListenStep = defineStep("Listen", {
  waitUntil: () => anyOf(received(inbox, { exactly: 2 })),
  execute: (context) => {
    const texts = context.consumed(inbox).map((entry) => entry.message.text);
    context.write(seen, `${context.read(seen) ?? ""}[${texts.join("|")}]`);
    return moveTo("Listen", {});
  },
});

export const publishRpcFlow = defineFlow({
  type: "PublishRpc",
  start: "Listen",
  steps: [ListenStep],
  persistence: { inbox, asideChannel: aside, guarded, seen },
  historyRetention: 4,
  rpcs: {
    send: rpc<string, boolean>({
      name: "send",
      handler: (context, text) => publishWithRoom(context, inbox, text),
      publishes: (_context, text) => planOf(inbox, text),
    }),
    putAside: rpc<string, boolean>({
      name: "aside",
      locks: [guarded],
      handler: (context, text) => publishWithRoom(context, aside, text),
      publishes: (_context, text) => planOf(aside, text),
    }),
  },
});

/** What each call returned or threw, in order. */
export type CallOutcomes = string[];

/**
 * Makes the calls, waiting after each until the Flow's executions all wait
 * again (a call that completed Listen's wait made it ready). `holdLock`
 * inserts and removes a held lock row for `Guarded`, as a running Step's
 * lock would be.
 */
export async function runPublishRpcCalls(store: Store, holdLock: (flowId: string, held: boolean) => Promise<void>): Promise<CallOutcomes> {
  const client = new Client({ store });
  const worker = new Worker({ store, flows: [publishRpcFlow], concurrency: 2 });
  const outcomes: CallOutcomes = [];
  const settled = async (flowId: string): Promise<void> => {
    await pollUntil(async () => {
      const description = await client.describe(flowId);
      return description.status !== "running" || description.executions.every((execution) => execution.status === "waiting");
    }, { timeoutMs: 120_000, description: `${flowId} to wait again` });
  };
  const call = async (method: "send" | "aside", flowId: string, text: string): Promise<void> => {
    try {
      const reference = method === "send" ? publishRpcFlow.send : publishRpcFlow.putAside;
      outcomes.push(`${method} ${JSON.stringify(text)}: ${String(await client.invokeRPC(reference, flowId, text, { lockConflictRetryMs: 0 }))}`);
    } catch (error) {
      outcomes.push(`${method} ${JSON.stringify(text)}: ${(error as Error).name}: ${(error as Error).message}`);
    }
    if (flowId !== "missing") await settled(flowId);
  };
  await worker.start();
  try {
    for (const flowId of ["pub-1", "pub-2", "pub-3"]) {
      assert.deepEqual(await client.start(publishRpcFlow, flowId, {}), { created: true });
      await settled(flowId);
    }
    // pub-1: the room, by count and by bytes, and a held lock.
    await call("send", "pub-1", "a");
    await call("send", "pub-1", "bb");
    await call("aside", "pub-1", "x1");
    await call("send", "pub-1", "é".repeat(20));
    await call("send", "pub-1", "c".repeat(30));
    await call("send", "pub-1", "c");
    await call("aside", "pub-1", "x2");
    await call("aside", "pub-1", "x3");
    await call("send", "pub-1", "d");
    await call("send", "pub-1", "e");
    await call("send", "pub-1", "");
    await holdLock("pub-1", true);
    await call("aside", "pub-1", "y");
    await holdLock("pub-1", false);
    // pub-2: texts jsonb cannot hold, new and stored; then a stopped Flow and a missing one.
    await call("aside", "pub-2", "nul \u0000");
    await call("send", "pub-2", "ok");
    await call("send", "pub-2", "cut \ud83d");
    await client.stop("pub-2", "stopped by the test");
    await call("send", "pub-2", "late");
    await call("send", "missing", "nobody");
    // pub-3: enough publishes (and the Steps they wake) to trim history past a multiple of 64.
    for (let index = 0; index < 30; index += 1) await call("send", "pub-3", `m${index}`);
  } finally {
    await worker.close();
  }
  return outcomes;
}

/** A held lock on `Guarded` for `flowId`, as a running Step's would be (a row in the locks table). */
export function lockHolder(connectionString: string, schema: string): (flowId: string, held: boolean) => Promise<void> {
  return async (flowId, held) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      const table = `${pg.escapeIdentifier(schema)}.locks`;
      if (held) await client.query(`INSERT INTO ${table} (flow_id, name, execution_id) VALUES ($1, 'Guarded', 'held-by-test')`, [flowId]);
      else await client.query(`DELETE FROM ${table} WHERE flow_id = $1 AND execution_id = 'held-by-test'`, [flowId]);
    } finally {
      await client.end();
    }
  };
}
