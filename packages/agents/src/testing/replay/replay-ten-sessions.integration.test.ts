/**
 * The worked example of docs/agents-fork-and-replay.md, as a test: ten
 * recorded sessions replay against today's agent; after a change to what a
 * read tool returns, exactly the sessions that called it diverge, each at
 * the model call that reads its result, with the old and the new result in
 * the diff.
 */
import assert from "node:assert/strict";
import { before, it } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { exportSession } from "../../session/export/export-session.ts";
import type { SessionFixture } from "../../session/export/session-fixture.ts";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import { replaySession } from "./replay-session.ts";

/** Looks an order up when the user names one, then answers with what the lookup said. */
function deskModel(): ScriptedModelClient {
  return new ScriptedModelClient((request) => {
    const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
    const orderId = /order (\d+)/.exec(text)?.[1];
    const results = ScriptedModelClient.toolResults(request);
    if (orderId !== undefined && results.length === 0) return { toolCalls: [{ name: "lookup_order", arguments: { order_id: orderId }, id: `lookup-${orderId}` }] };
    return { text: results.length === 0 ? `You said: ${text}` : `Status: ${results[0]?.output ?? ""}` };
  });
}

function deskFlow(status: (orderId: string) => string): AgentSessionFlow {
  return createStepwiseAgentSessionFlow({
    name: "desk",
    instructions: "Answer questions about orders.",
    model: deskModel(),
    tools: [functionTool<{ order_id: string }>({
      name: "lookup_order",
      description: "Look an order up.",
      parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
      effect: "read",
      execute: ({ order_id }) => status(order_id),
    })],
  }, "Desk");
}

const sessions = Array.from({ length: 10 }, (_, index) => ({ id: `session-${index + 1}`, text: index % 3 === 0 ? `Where is order ${index + 1}?` : `Hello number ${index + 1}.` }));
const fixtures = new Map<string, SessionFixture>();

before(async () => {
  const temporary = createTemporarySqliteStore();
  const flow = deskFlow((orderId) => `order ${orderId} shipped`);
  const worker = new Worker({ store: temporary.store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  try {
    const client = new Client({ store: temporary.store });
    for (const session of sessions) {
      await client.start(flow, session.id, {});
      await client.invokeRPC(flow.sendUserMessage, session.id, { text: session.text });
      await pollUntil(async () => {
        const [state] = await client.getAttributes(session.id, flow.agentState);
        return state?.turnCount === 1 && state.activeTurnId === null;
      }, { timeoutMs: 30_000, description: `${session.id}'s turn` });
      fixtures.set(session.id, JSON.parse(JSON.stringify(await exportSession(client, flow, session.id))) as SessionFixture);
    }
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});

/** Replays every fixture against `flow`; the diff of each session that diverged, by ID. */
async function divergedSessions(flow: AgentSessionFlow): Promise<Map<string, string>> {
  const diverged = new Map<string, string>();
  for (const [id, fixture] of fixtures) {
    const report = await replaySession(fixture, { flow });
    if (report.divergence !== null) diverged.set(id, report.divergence.diff);
  }
  return diverged;
}

it("ten recorded sessions replay unchanged; after a read tool's result changes, exactly the sessions that called it diverge", async () => {
  assert.equal(fixtures.size, 10);
  assert.deepEqual([...(await divergedSessions(deskFlow((orderId) => `order ${orderId} shipped`))).keys()], [], "today's agent is the recorded one");

  const diverged = await divergedSessions(deskFlow((orderId) => `order ${orderId} shipped on Monday`));
  assert.deepEqual([...diverged.keys()], ["session-1", "session-4", "session-7", "session-10"], "the sessions that looked an order up");
  assert.match(diverged.get("session-4") ?? "", /^turn-1, model call 2 \(RunModel\): the agent sent the model a different request\n {2}input\[\d+\]\.output\n {4}recorded: "order 4 shipped"\n {4}now: {6}"order 4 shipped on Monday"/);
});
