/**
 * Replay of the turns that are not plain chat: a planning turn and the
 * execution of its approved plan, an `ask_user` question, a `durable_wait`,
 * and a turn that steering ended followed by the steered turn. The
 * recording's plan approval, answer, wait and steer replay from the
 * fixture, with no person and no timer in the loop.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Client, Worker } from "@perdure/engine";
import { createTemporarySqliteStore, pollUntil } from "@perdure/engine/testing";
import { durableWaitTimerId } from "../../session/built-in-tools/durable-wait-timer.ts";
import { exportSession } from "../../session/export/export-session.ts";
import type { SessionFixture } from "../../session/export/session-fixture.ts";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { createStepwiseAgentSessionFlow } from "../../stepwise/create-stepwise-agent-session-flow.ts";
import { functionTool } from "../../stepwise/function-tool.ts";
import { ScriptedModelClient } from "../../stepwise/scripted-model-client.ts";
import { replaySession } from "./replay-session.ts";

const holdRuns: string[] = [];
/** The answers each run of pick_size saw. */
const sizeRuns: string[][] = [];
let releaseHold: () => void = () => undefined;
let holdStarted: () => void = () => undefined;

/** The model: what it does depends on the latest user text of the turn. */
function turnKindsModel(): ScriptedModelClient {
  return new ScriptedModelClient((request) => {
    const text = ScriptedModelClient.userTexts(request).at(-1) ?? "";
    const results = ScriptedModelClient.toolResults(request);
    if (text.startsWith("Plan")) {
      return results.length === 0 ? { toolCalls: [{ name: "write_todos", arguments: { todos: [{ content: "Pack the order", status: "pending" }] }, id: "todos-plan" }] } : { text: "Here is the plan." };
    }
    if (text.includes("approved plan revision")) {
      return results.length === 0 ? { toolCalls: [{ name: "write_todos", arguments: { todos: [{ content: "Pack the order", status: "completed" }] }, id: "todos-done" }] } : { text: "The order is packed." };
    }
    if (text.startsWith("Ask")) {
      return results.length === 0 ? { toolCalls: [{ name: "ask_user", arguments: { question: "Which colour?", choices: ["red", "blue"] }, id: "ask-colour" }] } : { text: `You chose: ${results[0]?.output ?? ""}` };
    }
    if (text.startsWith("Wait")) {
      return results.length === 0 ? { toolCalls: [{ name: "durable_wait", arguments: { duration_seconds: 3600, reason: "the courier" }, id: "wait-courier" }] } : { text: `Waited: ${results[0]?.output ?? ""}` };
    }
    if (text.startsWith("Hold")) {
      return results.length === 0 ? { toolCalls: [{ name: "hold_order", arguments: { order_id: "7" }, id: "hold-7" }] } : { text: "Held." };
    }
    if (text.startsWith("Size")) {
      return results.length === 0 ? { toolCalls: [{ name: "pick_size", arguments: {}, id: "size-1" }] } : { text: `Picked: ${results[0]?.output ?? ""}` };
    }
    return { text: `Steered to: ${text}` };
  });
}

function turnKindsFlow(model: ScriptedModelClient, holdDescription = "Hold an order."): AgentSessionFlow {
  return createStepwiseAgentSessionFlow({
    name: "turn-kinds",
    instructions: "Plan, ask, wait and hold orders.",
    model,
    builtInTools: ["ask_user", "durable_wait", "write_todos"],
    planModeEnabled: true,
    tools: [
      functionTool<{ order_id: string }>({
        name: "hold_order",
        description: holdDescription,
        parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
        effect: "non_idempotent_write",
        requiresApproval: false,
        execute: async ({ order_id }) => {
          holdRuns.push(order_id);
          holdStarted();
          await new Promise<void>((resolve) => { releaseHold = resolve; });
          return `held ${order_id}`;
        },
      }),
      functionTool<Record<string, never>>({
        name: "pick_size",
        description: "Ask the user for a size.",
        parameters: { type: "object", properties: {} },
        effect: "read",
        execute: (_arguments, context) => {
          sizeRuns.push(context.inputAnswers.map((answer) => answer.answer ?? ""));
          const [answer] = context.inputAnswers;
          return answer === undefined ? { kind: "tool_input_requested", question: "Which size?", choices: ["S", "M", "L"] } : `size ${answer.answer ?? ""}`;
        },
      }),
    ],
  }, "TurnKinds");
}

let fixture: SessionFixture;

before(async () => {
  const temporary = createTemporarySqliteStore();
  const flow = turnKindsFlow(turnKindsModel());
  const worker = new Worker({ store: temporary.store, flows: [flow], livenessTimeoutMs: 1000, pollIntervalMs: 20 });
  await worker.start();
  const client = new Client({ store: temporary.store });
  const waitForTurn = async (turn: number): Promise<void> => {
    await pollUntil(async () => {
      const [state] = await client.getAttributes("recorded", flow.agentState);
      return state !== undefined && state.turnCount >= turn && state.activeTurnId === null;
    }, { timeoutMs: 30_000, description: `recorded turn ${turn}` });
  };
  try {
    await client.start(flow, "recorded", {});
    await client.invokeRPC(flow.sendUserMessage, "recorded", { text: "Plan the packing.", planMode: true });
    await waitForTurn(1);
    const [plan] = await client.getAttributes("recorded", flow.agentPlan);
    assert.equal(await client.invokeRPC(flow.executePlan, "recorded", { revision: plan?.revision ?? 0 }), true);
    await waitForTurn(2);

    await client.invokeRPC(flow.sendUserMessage, "recorded", { text: "Ask me a colour." });
    const [question] = await pollUntil(async () => {
      const [pending] = await client.getAttributes("recorded", flow.pendingInterrupts);
      return pending !== undefined && pending.length > 0 ? pending : undefined;
    }, { timeoutMs: 30_000, description: "the question" });
    assert.equal(await client.invokeRPC(flow.answerQuestion, "recorded", { interruptId: question!.interruptId, answer: "blue" }), true);
    await waitForTurn(3);

    await client.invokeRPC(flow.sendUserMessage, "recorded", { text: "Wait for the courier." });
    await pollUntil(async () => (await client.skipTimer("recorded", durableWaitTimerId("wait-courier"))) > 0, { timeoutMs: 30_000, description: "the wait's timer" });
    await waitForTurn(4);

    // Turn 5 holds an order; a steer arrives while the hold runs, so turn 5 ends steered and turn 6 answers the steer.
    const started = new Promise<void>((resolve) => { holdStarted = resolve; });
    await client.invokeRPC(flow.sendUserMessage, "recorded", { text: "Hold order 7." });
    await started;
    assert.equal(await client.invokeRPC(flow.steerUserMessage, "recorded", { messageId: null, text: "Ship it instead." }), true);
    releaseHold();
    await waitForTurn(6);

    // Turn 7: a read tool asks its own question.
    await client.invokeRPC(flow.sendUserMessage, "recorded", { text: "Size please." });
    const [sizeQuestion] = await pollUntil(async () => {
      const [pending] = await client.getAttributes("recorded", flow.pendingInterrupts);
      return pending !== undefined && pending.length > 0 ? pending : undefined;
    }, { timeoutMs: 30_000, description: "the tool's question" });
    assert.equal(await client.invokeRPC(flow.answerQuestion, "recorded", { interruptId: sizeQuestion!.interruptId, answer: "M" }), true);
    await waitForTurn(7);
    fixture = JSON.parse(JSON.stringify(await exportSession(client, flow, "recorded"))) as SessionFixture;
  } finally {
    await worker.close();
    await temporary.dispose();
  }
});

describe("replaySession of plan, question (ask_user and a tool's own), wait and steered turns", () => {
  it("the fixture records how each turn started and what answered it", () => {
    assert.deepEqual(fixture.turns.map((turn) => [turn.interaction_mode, turn.started_by, turn.plan_revision ?? null]), [
      ["planning", "message", null], ["executing", "plan_execution", 1], ["chat", "message", null], ["chat", "message", null], ["chat", "message", null], ["chat", "steer", null], ["chat", "message", null],
    ]);
    assert.deepEqual(fixture.turns[6]?.tool_calls[0]?.input_answers, [{ resolution: "answered", answer: "M" }]);
    assert.deepEqual(fixture.turns[5]?.user_messages, ["Ship it instead."]);
    assert.equal(fixture.turns[4]?.model_calls.length, 1, "the steer ended turn 5 before a second model call");
    assert.deepEqual(holdRuns, ["7"]);
  });

  it("an unchanged agent replays every turn with no divergence, answering, waiting and steering from the recording", async () => {
    const sizeRunsBefore = sizeRuns.length;
    const report = await replaySession(fixture, { flow: turnKindsFlow(turnKindsModel()), turnTimeoutMs: 60_000 });
    assert.equal(report.divergence, null, report.divergence?.diff);
    assert.equal(report.turns, 7);
    assert.equal(report.modelCalls, fixture.turns.reduce((sum, turn) => sum + turn.model_calls.length, 0));
    assert.deepEqual(report.toolCallsFromRecording, ["hold-7"]);
    assert.deepEqual(report.toolCallsRun, ["size-1", "size-1"], "the read tool ran twice: to ask, then with the answer");
    assert.deepEqual(sizeRuns.slice(sizeRunsBefore), [[], ["M"]], "the read tool asked again and got the recorded answer");
    assert.deepEqual(holdRuns, ["7"], "the hold did not run again");
  });

  it("a changed tool description diverges at the first model call that offers it: the plan's execution, since a planning turn offers only write_todos", async () => {
    const report = await replaySession(fixture, { flow: turnKindsFlow(turnKindsModel(), "Hold an order for a day.") });
    assert.equal(report.divergence?.kind, "model_request");
    assert.equal(report.divergence?.turnId, "turn-2");
    assert.equal(report.divergence?.modelCall, 1);
    assert.equal(report.turns, 1);
    assert.match(report.divergence?.diff ?? "", /description\n {4}recorded: "Hold an order\."\n {4}now: {6}"Hold an order for a day\."/);
  });
});
