/**
 * A fork carries what the chat showed of the turns it keeps: the approval of
 * each approved call (`ApprovedToolCalls`) and the client's ID of each user
 * message (`UserMessageClientIds`), and nothing of the turns after its
 * boundary. A reloaded tab of the fork shows the kept turns as the source's
 * did. A real Worker on a SQLite file runs two approved refunds.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import { AgentSessionTestClient } from "../../testing/agent-session-test-client.ts";
import { readAgentSessionUIMessages } from "../../ui-stream/agent-ui-messages.ts";
import { forkSession } from "./fork-session.ts";

const refunds: string[] = [];

const model = new ScriptedModelClient((request) => {
  const order = /refund (\d+)/.exec(ScriptedModelClient.userTexts(request).at(-1) ?? "")?.[1] ?? "0";
  if (ScriptedModelClient.toolResults(request).length === 0) return { toolCalls: [{ name: "refund_order", arguments: { order_id: order }, id: `refund-${order}` }] };
  return { text: `refunded ${order}` };
});

const flow = createStepwiseAgentSessionFlow({
  name: "refunds",
  instructions: "Refund what the user asks.",
  model,
  tools: [
    functionTool<{ order_id: string }>({
      name: "refund_order",
      description: "Refund an order.",
      parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
      effect: "non_idempotent_write",
      requiresApproval: true,
      execute: ({ order_id }) => {
        refunds.push(order_id);
        return `refunded ${order_id}`;
      },
    }),
  ],
}, "ForkChatRecordsAgent");

/** Sends `text` with the client's message ID, approves the refund it asks for, and waits for the turn's end. */
async function approvedRefundTurn(client: Client, sessions: AgentSessionTestClient, text: string, clientMessageId: string, turn: number): Promise<void> {
  assert.equal(await client.invokeRPC(flow.sendUserMessage, "source", { text, clientMessageId }), true);
  const [interrupt] = await sessions.waitForPendingInterrupts("source", 1, { timeoutMs: 60_000 });
  assert.ok(interrupt !== undefined);
  assert.equal(await sessions.resolveInterrupt("source", { interruptId: interrupt.interruptId, approved: true }), true);
  await sessions.waitForTurnCount("source", turn, { timeoutMs: 60_000 });
}

it("a fork keeps the approvals and client message IDs of its kept turns, and none of the later ones", { timeout: 300_000 }, async (t) => {
  const temporary = createTemporarySqliteStore();
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  t.after(async () => {
    await worker.close();
    await temporary.dispose();
  });
  const client = new Client({ store: temporary.store });
  const sessions = new AgentSessionTestClient(client, flow);
  await sessions.startSession("source");
  await approvedRefundTurn(client, sessions, "refund 1001", "client-message-one", 1);
  await approvedRefundTurn(client, sessions, "refund 1002", "client-message-two", 2);
  assert.deepEqual(refunds, ["1001", "1002"]);

  const source = await readAgentSessionUIMessages({ client, flow, flowId: "source" });
  const { sessionId } = await forkSession(client, flow, { sourceSessionId: "source", throughTurn: 1, sessionId: "fork-1" });
  const fork = await readAgentSessionUIMessages({ client, flow, flowId: sessionId });

  // The fork's chat is the source's first turn, part for part: the user message's ID and the approved refund.
  const sourceFirstTurn = source.messages.slice(0, 2);
  assert.deepEqual(fork.messages, sourceFirstTurn);
  assert.equal(fork.messages[0]?.id, "client-message-one");
  const refundPart = fork.messages[1]?.parts.find((part) => part.type === "dynamic-tool");
  assert.ok(refundPart !== undefined && "approval" in refundPart, `the fork's refund part carries its approval: ${JSON.stringify(refundPart)}`);
  assert.equal((refundPart.approval as { approved?: unknown }).approved, true);

  // Nothing of turn 2 came along.
  const keptIds = await client.readFlowState(sessionId, async (reader) => ({
    approvals: (await reader.list(flow.approvedToolCalls)).map((entry) => entry.key),
    clientIds: (await reader.list(flow.userMessageClientIds)).map((entry) => entry.value),
  }));
  assert.deepEqual(keptIds, { approvals: ["refund-1001"], clientIds: ["client-message-one"] });
  assert.deepEqual(refunds, ["1001", "1002"], "forking ran no tool");
});
