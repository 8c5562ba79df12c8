/**
 * The cap on waiting user messages holds under concurrent senders: the check
 * and the enqueue run in one store transaction that holds the session's Flow
 * row (PostgreSQL: `SELECT … FOR UPDATE`; SQLite: the write lock, with a
 * replay that reruns a transaction whose reads changed), so no two senders
 * can both see the last free place. Thirty calls at once, through two stores
 * on one database (as two processes would), `send_user_message` and
 * `steer_user_message` mixed: exactly the cap's count is stored, every other
 * call is refused with `QueuedUserMessagesFullError`.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { Client, type Store } from "@perdure/engine";
import { createTemporaryPostgresSchema, createTemporarySqliteStore, postgresTestSkip, requireTestDatabaseUrl, testDatabaseUrl } from "@perdure/engine/testing";
import { ScriptedModelClient, StepwiseAgentRunner } from "../../stepwise/index.ts";
import { createAgentSessionFlow } from "../create-agent-session-flow.ts";
import { QueuedUserMessagesFullError } from "../queued-user-messages-full-error.ts";

const cap = 5;
const senders = 30;

const flow = createAgentSessionFlow(
  new StepwiseAgentRunner({ name: "cap", instructions: "Answer.", model: new ScriptedModelClient(() => ({ text: "done" })) }),
  "QueueCapConcurrencyAgent",
  { maxQueuedUserMessages: cap },
);

/** Starts a session (no Worker runs, so nothing takes its messages) and sends from two stores at once. */
async function sendConcurrently(first: Store, second: Store): Promise<void> {
  const clients = [new Client({ store: first }), new Client({ store: second })];
  await clients[0]!.start(flow, "capped", {});
  const calls = Array.from({ length: senders }, (_unused, index) => {
    const client = clients[index % 2]!;
    const text = `message ${index}`;
    return index % 3 === 0
      ? client.invokeRPC(flow.steerUserMessage, "capped", { messageId: null, text })
      : client.invokeRPC(flow.sendUserMessage, "capped", { text });
  });
  const settled = await Promise.allSettled(calls);
  const accepted = settled.filter((outcome) => outcome.status === "fulfilled");
  const refused = settled.filter((outcome) => outcome.status === "rejected");
  for (const outcome of accepted) assert.equal(outcome.value, true);
  for (const outcome of refused) assert.ok(QueuedUserMessagesFullError.isInstance(outcome.reason), `refused with ${String(outcome.reason)}`);
  assert.equal(accepted.length, cap, `${accepted.length} of ${senders} concurrent messages were taken; the cap is ${cap}`);
  assert.equal(refused.length, senders - cap);
  const snapshot = await clients[1]!.invokeRPC(flow.getAgentSnapshot, "capped");
  assert.equal((snapshot.queuedMessages?.length ?? 0) + (snapshot.steeredMessages?.length ?? 0), cap);
}

it("thirty concurrent senders through two stores on one SQLite file leave exactly the cap's count waiting", async (t) => {
  const temporary = createTemporarySqliteStore();
  t.after(() => temporary.dispose());
  const second = temporary.reopen();
  await sendConcurrently(temporary.store, second);
});

it("thirty concurrent senders through two PostgreSQL stores leave exactly the cap's count waiting", { skip: postgresTestSkip(testDatabaseUrl()) }, async (t) => {
  const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
  t.after(() => temporary.dispose());
  const first = await temporary.open({ poolSize: 8 });
  const second = await temporary.open({ poolSize: 8 });
  await sendConcurrently(first, second);
});
