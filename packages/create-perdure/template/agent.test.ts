/**
 * The agent on a private engine (a temporary SQLite store) with a Worker in
 * this process and the demo model, whatever keys are set: a refund waits for
 * its approval, then runs once; a bad argument is a tool error the model sees.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AgentSessionTestClient, AgentTestEnvironment, PrivateEngine } from "@perdure/agents/testing";
import { demoModel } from "./model.ts";
import { createSupportAgent, lookupOrder } from "./perdure.agents.ts";

const supportAgent = createSupportAgent(demoModel);
let engine: PrivateEngine;
let environment: AgentTestEnvironment;

before(async () => {
  engine = await PrivateEngine.start();
  environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [supportAgent] });
});

after(async () => {
  await environment.close();
  await engine.stop();
});

test("a refund waits for approval, then runs once and is reported", async () => {
  const sessions = new AgentSessionTestClient(environment.client, supportAgent);
  await sessions.start("session-1");
  await sessions.sendUserMessage("session-1", "please refund order 1002");
  const [approval] = await sessions.waitForPendingInterrupts("session-1");
  assert.ok(approval !== undefined);
  assert.equal(approval.toolName, "refund_order");
  await sessions.resolveInterrupt("session-1", { interruptId: approval.interruptId, approved: true });
  await sessions.waitForTurnCount("session-1", 1);
  const snapshot = await sessions.getAgentSnapshot("session-1");
  assert.equal(snapshot.messages.at(-1)?.text, "refunded order 1002 (Rain jacket)");
});

test("the model is offered the JSON Schema generated from the zod schema", () => {
  assert.deepEqual(lookupOrder.parameters.required, ["order_id"]);
  assert.equal(lookupOrder.parameters.type, "object");
});
