/**
 * `durable_wait` and reserved built-in names under Stepwise with the
 * ScriptedModelClient, on a real SQLite engine: a one-day wait on an engine
 * Timer ended with SkipTimer, invalid durations that fail without a Step,
 * and the refusals of a name an enabled built-in tool reserves.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import { createAgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "./scripted-model-client.ts";
import type { ModelRequest } from "./model-client.ts";
import { StepwiseAgentRunner } from "./stepwise-agent-runner.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

function waitThenReport(argumentsValue: unknown): (request: ModelRequest) => ScriptedModelReply {
  return (request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: `Waited: ${results.map((result) => result.output).join(" | ")}` };
    return { text: "Waiting.", toolCalls: [{ name: "durable_wait", id: `wait-${request.turnId}`, arguments: argumentsValue }] };
  };
}

void test("durable_wait of one day waits in AwaitTimer on an engine Timer, and SkipTimer ends it with the contract's result", async (t) => {
  const model = new ScriptedModelClient(waitThenReport({ duration_seconds: 86_400, reason: "the parcel arrives tomorrow" }));
  const flow = createStepwiseAgentSessionFlow({ name: "waiter", instructions: "Wait.", model, builtInTools: ["durable_wait"] }, "StepwiseDurableWait");
  const { engine, environment, sessions } = await startStepwiseTestAgent(t, [flow]);

  const before = Date.now();
  await sessions.start("w1", { initialMessage: "Tell me when the parcel is here." });
  const waiting = await pollUntil(async () => {
    const snapshot = await sessions.getAgentSnapshot("w1");
    return snapshot.toolCalls[0]?.status === "waiting_for_timer" ? snapshot : undefined;
  }, { description: "the durable wait to start" });
  const [record] = waiting.toolCalls;
  const waitUntil = Date.parse(record?.waitUntil ?? "");
  assert.ok(waitUntil >= before + 86_400_000 && waitUntil <= Date.now() + 86_400_000, `wait_until ${record?.waitUntil} is one day after the call`);
  assert.deepEqual([record?.effect, record?.requiresApproval], ["read", false]);
  assert.equal(waiting.state?.status, "running_tools");
  assert.deepEqual(payloadsOf(await sessions.readEvents("w1"), "timer_started"), [{ tool_call_id: "wait-turn-1", wait_until: record?.waitUntil, reason: "the parcel arrives tomorrow" }]);
  await pollUntil(async () => ((await environment.client.describe("w1")).executions.some((execution) => execution.stepType === "AwaitTimer" && execution.status === "waiting") ? true : undefined), { description: "AwaitTimer to wait" });

  assert.equal(await sessions.skipTimer("w1", "wait-turn-1"), 1, "SkipTimer fires the call's Timer");
  await sessions.waitForTurnCount("w1", 1);
  const result = '{"status":"completed","waited_seconds":86400,"reason":"the parcel arrives tomorrow"}';
  const snapshot = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(snapshot.messages.slice(2).map((message) => [message.role, message.text]), [["tool", result], ["assistant", `Waited: ${result}`]]);
  assert.equal(await sessions.skipTimer("w1", "wait-turn-1"), 0, "nothing waits any more");
  assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "w1")), ["StartAgentSession", "RunModel", "AwaitTimer", "ResumeTurn", "RunModel"]);
});

void test("a durable_wait with an invalid duration fails in RunModel's commit, without an AwaitTimer Step", async (t) => {
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
    return {
      toolCalls: [
        { name: "durable_wait", id: "zero", arguments: { duration_seconds: 0, reason: "now" } },
        { name: "durable_wait", id: "long", arguments: { duration_seconds: 61, reason: "too long" } },
        { name: "durable_wait", id: "half", arguments: { duration_seconds: 1.5, reason: "fractional" } },
        { name: "durable_wait", id: "blank", arguments: { duration_seconds: 5, reason: " " } },
      ],
    };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "waiter", instructions: "Wait.", model, builtInTools: ["durable_wait"], maxDurableWaitMs: 60_000 }, "StepwiseDurableWaitInvalid");
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("v1", { initialMessage: "Wait." });
  await sessions.waitForTurnCount("v1", 1);
  assert.deepEqual((await sessions.getAgentSnapshot("v1")).messages.filter((message) => message.role === "tool").map((message) => message.text), [
    "invalid durable_wait arguments: duration_seconds must be a whole number from 1 to 60, got 0",
    "invalid durable_wait arguments: duration_seconds must be a whole number from 1 to 60, got 61",
    "invalid durable_wait arguments: duration_seconds must be a whole number from 1 to 60, got 1.5",
    "invalid durable_wait arguments: reason must be a non-blank string, got ' '",
  ]);
  assert.deepEqual(payloadsOf(await sessions.readEvents("v1"), "timer_started"), []);
  assert.deepEqual(completedExecutes(await readStepHistory(engine.address, "v1")), ["StartAgentSession", "RunModel", "ResumeTurn", "RunModel"]);
});

void test("an enabled built-in name is reserved: a tool policy or a function tool with it is refused, and a clash from session options fails RunModel before the model call", async (t) => {
  const model = new ScriptedModelClient(() => ({ text: "never" }));
  const fakeWait = functionTool({ name: "durable_wait", description: "Not the built-in.", parameters: { type: "object", properties: {} }, effect: "read", execute: () => "fake" });
  assert.throws(
    () => createStepwiseAgentSessionFlow({ name: "a", instructions: "x", model, builtInTools: ["ask_user"], toolPolicies: { ask_user: { effect: "non_idempotent_write" } } }, "ReservedPolicy"),
    (error: unknown) => InvalidInputError.isInstance(error) && /^toolPolicies\.ask_user is refused: ask_user is an enabled built-in tool/.test((error as Error).message),
  );
  assert.throws(() => createStepwiseAgentSessionFlow({ name: "a", instructions: "x", model, tools: [fakeWait], builtInTools: ["durable_wait"] }, "ReservedTool"),
    (error: unknown) => InvalidInputError.isInstance(error) && (error as Error).message === "tool durable_wait uses the name of an enabled built-in tool",
  );
  assert.throws(() => createAgentSessionFlow(new StepwiseAgentRunner({ name: "a", instructions: "x", model }), "BadBuiltIn", { builtInTools: ["wait_forever" as "durable_wait"] }), /builtInTools entry "wait_forever" is not a built-in tool/);

  // Enabled only in the session options, the clash shows in the first RunModel, before any model request.
  const flow = createAgentSessionFlow(new StepwiseAgentRunner({ name: "clash", instructions: "x", model, tools: [fakeWait] }), "StepwiseBuiltInClash", { builtInTools: ["durable_wait"] });
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("r1", { initialMessage: "Wait." });
  const state = await sessions.waitForTurnCount("r1", 1, { timeoutMs: 30_000 });
  assert.match(state.lastTurnError ?? "", /^TypeError: tool durable_wait uses the name of an enabled built-in tool$/);
  assert.equal(model.requests.length, 0, "the model was never called");
});
