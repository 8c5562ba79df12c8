import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore } from "@perdure/engine/testing";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { createDemoModel } from "./demo-model.ts";
import { createSupportAgentFlow } from "./support-agent-flow.ts";

test("the support agent answers a lookup and refunds once after approval on the demo model", async () => {
  const temporary = createTemporarySqliteStore();
  const flow = createSupportAgentFlow(createDemoModel());
  const worker = new Worker({ store: temporary.store, flows: [flow], pollIntervalMs: 20 });
  await worker.start();
  const sessions = new AgentSessionTestClient(new Client({ store: temporary.store }), flow);
  try {
    await sessions.start("support-test");
    await sessions.sendUserMessage("support-test", "Where is order 1003?");
    await sessions.waitForTurnCount("support-test", 1);
    let snapshot = await sessions.getAgentSnapshot("support-test");
    assert.equal(snapshot.messages.at(-1)?.text, "Order 1003 (Headlamp, 32.00 USD) is delivered.");
    await sessions.sendUserMessage("support-test", "refund order 1003 please");
    const [interrupt] = await sessions.waitForPendingInterrupts("support-test");
    assert.equal(interrupt?.toolName, "refund_order");
    assert.equal(interrupt?.arguments, '{"order_id":"1003"}');
    assert.equal(await sessions.resolveInterrupt("support-test", { interruptId: interrupt?.interruptId ?? "", approved: true }), true);
    await sessions.waitForTurnCount("support-test", 2);
    snapshot = await sessions.getAgentSnapshot("support-test");
    assert.equal(snapshot.messages.at(-1)?.text, "Refund result: refunded 32.00 USD for order 1003 (Headlamp)");
    const history = await sessions.client.getStepHistory("support-test");
    assert.equal(history.filter((entry) => entry.stepType === "CallSingleAttemptTool" && entry.status === "completed").length, 1);
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});
