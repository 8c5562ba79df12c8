/**
 * A refused session RPC leaves the store as it was: every row of the SQLite
 * file is compared before and after hundreds of generated calls that the
 * session must turn down (unknown, stale or wrong-kind interrupts, answers
 * outside the choices or blank, plans that do not exist, messages it does
 * not take, malformed input) and of reads, while the session waits on a
 * question and an approval at once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { InvalidInputError, type Client } from "@perdure/engine";
import { assertSqliteStoreUnchanged, snapshotSqliteStore } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { createStepwiseAgentSessionFlow } from "../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../stepwise/scripted-model-client.ts";
import { AgentSessionTestClient } from "./agent-session-test-client.ts";
import { AgentTestEnvironment } from "./agent-test-environment.ts";
import { PrivateEngine } from "./private-engine.ts";

const sessionId = "refusals-1";

/** One call the session must refuse (`false`, or an `InvalidInputError`), or a read. */
type RefusedCall = { label: string; invoke: (client: Client, flow: AgentSessionFlow) => Promise<unknown> };

const unknownInterruptId = fc.oneof(fc.constantFrom("ask-1-approval", "refund-1", "refund-2-approval", "ASK-1", "ask-1 ", "turn-1"), fc.string({ minLength: 1, maxLength: 40 }))
  .filter((id) => id !== "ask-1" && id !== "refund-1-approval");

const refusedCall: fc.Arbitrary<RefusedCall> = fc.oneof(
  unknownInterruptId.chain((interruptId) => fc.boolean().map((approved): RefusedCall => ({
    label: `resolve_interrupt ${JSON.stringify(interruptId)} approved=${approved}`,
    invoke: (client, flow) => client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId, approved }),
  }))),
  fc.constant<RefusedCall>({
    label: "resolve_interrupt approving a question",
    invoke: (client, flow) => client.invokeRPC(flow.resolveInterrupt, sessionId, { interruptId: "ask-1", approved: true }),
  }),
  fc.oneof(fc.constantFrom("XL", "", " \t\u3000\n", "s", "S "), fc.string({ maxLength: 20 }).filter((text) => !["S", "M", "L"].includes(text))).map((answer): RefusedCall => ({
    label: `answer_question outside the choices ${JSON.stringify(answer)}`,
    invoke: (client, flow) => client.invokeRPC(flow.answerQuestion, sessionId, { interruptId: "ask-1", answer }),
  })),
  unknownInterruptId.map((interruptId): RefusedCall => ({
    label: `answer_question to ${JSON.stringify(interruptId)}`,
    invoke: (client, flow) => client.invokeRPC(flow.answerQuestion, sessionId, { interruptId, answer: "M" }),
  })),
  fc.constant<RefusedCall>({
    label: "answer_question to an approval",
    invoke: (client, flow) => client.invokeRPC(flow.answerQuestion, sessionId, { interruptId: "refund-1-approval", answer: "M" }),
  }),
  fc.integer({ min: -3, max: 50 }).map((revision): RefusedCall => ({
    label: `execute_plan revision ${revision} of a session without a plan`,
    invoke: (client, flow) => client.invokeRPC(flow.executePlan, sessionId, { revision }),
  })),
  fc.constantFrom("", "   ", "\u00a0\u2003\n").map((text): RefusedCall => ({
    label: `send_user_message blank ${JSON.stringify(text)}`,
    invoke: (client, flow) => client.invokeRPC(flow.sendUserMessage, sessionId, { text }),
  })),
  fc.constant<RefusedCall>({
    label: "send_user_message planMode while plan mode is off",
    invoke: (client, flow) => client.invokeRPC(flow.sendUserMessage, sessionId, { text: "Plan it.", planMode: true }),
  }),
  fc.jsonValue({ maxDepth: 2 }).map((input): RefusedCall => ({
    label: `malformed input ${JSON.stringify(input)?.slice(0, 80)}`,
    invoke: async (client, flow) => {
      const rpc = [flow.resolveInterrupt, flow.answerQuestion, flow.executePlan, flow.sendUserMessage][Math.abs(JSON.stringify(input)?.length ?? 0) % 4];
      assert.ok(rpc !== undefined);
      return client.invokeRPC(rpc as typeof flow.resolveInterrupt, sessionId, input as never);
    },
  })),
  fc.constantFrom<RefusedCall>(
    { label: "get_agent_snapshot", invoke: (client, flow) => client.invokeRPC(flow.getAgentSnapshot, sessionId) },
    { label: "list_agent_messages", invoke: (client, flow) => client.invokeRPC(flow.listAgentMessages, sessionId, { limit: 2 }) },
  ),
);

void test("refused session RPCs and reads leave every row of the store as it was, while a question and an approval wait", { timeout: 300_000 }, async (t) => {
  let refunds = 0;
  const refund = functionTool({
    name: "refund", description: "Refund an order.", parameters: { type: "object", properties: {} }, effect: "non_idempotent_write",
    execute: () => { refunds += 1; return "refunded"; },
  });
  const model = new ScriptedModelClient((request) => {
    if (ScriptedModelClient.toolResults(request).length > 0) return { text: "Done." };
    return { toolCalls: [{ name: "ask_user", id: "ask-1", arguments: { question: "Which size?", choices: ["S", "M", "L"] } }, { name: "refund", id: "refund-1" }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "refusals", instructions: "Ask, then refund.", model, tools: [refund], builtInTools: ["ask_user"] }, "RefusedRpcs");
  const engine = await PrivateEngine.start();
  const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [flow] });
  t.after(async () => {
    await environment.close();
    await engine.stop();
  });
  const sessions = new AgentSessionTestClient(environment.client, flow);
  await sessions.start(sessionId, { initialMessage: "Swap my shirt and refund the old one." });
  const pending = await sessions.waitForPendingInterrupts(sessionId, 2);
  assert.deepEqual(pending.map((interrupt) => [interrupt.interruptId, interrupt.kind]).sort(), [["ask-1", "question"], ["refund-1-approval", "approval"]]);
  // Wait until the Worker has nothing left to commit: the turn waits on people only.
  await sessions.waitForState(sessionId, (state) => state.status === "running_tools");
  await new Promise((resolve) => setTimeout(resolve, 500));

  const before = snapshotSqliteStore(engine.databasePath);
  const outcomes = new Map<string, number>();
  await fc.assert(fc.asyncProperty(refusedCall, async (call) => {
    let outcome: string;
    try {
      const result = await call.invoke(environment.client, flow);
      outcome = typeof result === "boolean" ? String(result) : "read";
    } catch (error) {
      assert.ok(InvalidInputError.isInstance(error), `${call.label} threw ${String(error)}, not an InvalidInputError`);
      assert.match((error as Error).message, /\S/);
      outcome = "invalid input";
    }
    assert.notEqual(outcome, "true", `${call.label} was accepted`);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }), { numRuns: 400, seed: Number(process.env.PERDURE_REFUSED_RPC_SEED ?? Date.now() % 2 ** 31) });
  assertSqliteStoreUnchanged(engine.databasePath, before, "400 refused RPCs and reads");
  t.diagnostic(`outcomes: ${[...outcomes].map(([outcome, count]) => `${outcome}×${count}`).join(", ")}`);
  assert.ok((outcomes.get("false") ?? 0) > 0 && (outcomes.get("invalid input") ?? 0) > 0 && (outcomes.get("read") ?? 0) > 0, "every kind of refusal was tried");

  // The session still takes the answers it was waiting for.
  assert.equal(await sessions.answerQuestion(sessionId, { interruptId: "ask-1", answer: "M" }), true);
  assert.equal(await sessions.resolveInterrupt(sessionId, { interruptId: "refund-1-approval", approved: true }), true);
  await sessions.waitForTurnCount(sessionId, 1);
  assert.equal(refunds, 1);
});
