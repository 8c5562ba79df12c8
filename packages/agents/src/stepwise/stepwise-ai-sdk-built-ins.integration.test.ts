/**
 * Built-in tools and plans through the AI SDK client, on a
 * `MockLanguageModelV4` scripted from its prompt, on a real SQLite engine:
 * what a provider is sent (the built-in tools' schemas, the tool choice, the
 * plan note, the tool results) and what the session commits.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pollUntil } from "@perdure/engine/testing";
import { createAiSdkModelClient } from "../ai-sdk/index.ts";
import type { DeferredToolOutcome } from "../contract/agent-framework-runner.ts";
import { builtInToolDefinition } from "../contract/built-in-tool-definitions.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";
import { finishPart, promptAsJson, scriptedLanguageModel, scriptedToolCallId, textParts, toolCallPart } from "./test-fixtures/stepwise-scripted-language-model.ts";

const anthropicIdentity = { provider: "anthropic.messages", modelId: "claude-test" };

function toolMessage(results: [toolCallId: string, toolName: string, output: string][]): unknown {
  return { role: "tool", content: results.map(([toolCallId, toolName, output]) => ({ type: "tool-result", toolCallId, toolName, output: { type: "text", value: output } })) };
}

void test("AI SDK: ask_user reaches the provider with its schema; answered, refused, duplicate, declined and expired answers each give the model the contract's result", async (t) => {
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    const [result] = facts.turnToolResults;
    if (result !== undefined) return [...textParts("answer", [`You said: ${result.output}`]), finishPart("stop")];
    return [toolCallPart(scriptedToolCallId(facts, 0), "ask_user", '{"question": "Which plan?", "choices": ["basic", "pro"], "allows_free_text": null}'), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow(
    { name: "plans", instructions: "Sell plans.", model: createAiSdkModelClient(model), builtInTools: ["ask_user"], interruptDeadlineMs: 3_600_000 },
    "AiSdkAskUser",
  );
  const { engine, environment, sessions } = await startStepwiseTestAgent(t, [flow]);

  await sessions.start("a1", { initialMessage: "Sign me up." });
  const [question] = await sessions.waitForPendingInterrupts("a1");
  assert.deepEqual([question?.interruptId, question?.question, question?.choices, question?.allowsFreeText], ["call-u1-m1-0", "Which plan?", ["basic", "pro"], false]);
  const offered = model.doStreamCalls[0]?.tools ?? [];
  assert.deepEqual(offered.map((tool) => tool.name), ["ask_user"]);
  assert.deepEqual((offered[0] as { inputSchema?: unknown }).inputSchema, builtInToolDefinition("ask_user").parameters, "the provider gets the built-in tool's JSON Schema");
  assert.equal(await sessions.answerQuestion("a1", { interruptId: "call-u1-m1-0", answer: "enterprise" }), false, "refused: outside the choices");
  assert.equal(await sessions.answerQuestion("a1", { interruptId: "call-u1-m1-0", answer: "pro" }), true);
  assert.equal(await sessions.answerQuestion("a1", { interruptId: "call-u1-m1-0", answer: "basic" }), false, "duplicate");
  await sessions.waitForTurnCount("a1", 1);
  assert.deepEqual(promptAsJson(model.doStreamCalls[1]?.prompt).at(-1), toolMessage([["call-u1-m1-0", "ask_user", '{"status":"answered","answer":"pro"}']]));

  await sessions.sendUserMessage("a1", "Again.");
  await sessions.waitForPendingInterrupts("a1");
  assert.equal(await sessions.resolveInterrupt("a1", { interruptId: "call-u2-m1-0", approved: false }), true);
  await sessions.waitForTurnCount("a1", 2);
  assert.deepEqual(promptAsJson(model.doStreamCalls[3]?.prompt).at(-1), toolMessage([["call-u2-m1-0", "ask_user", "The user declined to answer."]]));

  await sessions.sendUserMessage("a1", "Once more.");
  await sessions.waitForPendingInterrupts("a1");
  // The question is pending once RunModel commits; its deadline Timer exists once AwaitQuestionAnswer's wait commits, after.
  await pollUntil(async () => ((await environment.client.skipTimer("a1", "deadline")) === 1 ? true : undefined), { description: "the question's deadline Timer" });
  await sessions.waitForTurnCount("a1", 3);
  assert.deepEqual(promptAsJson(model.doStreamCalls[5]?.prompt).at(-1), toolMessage([["call-u3-m1-0", "ask_user", "question deadline passed"]]));
  assert.equal(completedExecutes(await readStepHistory(engine.address, "a1")).filter((step) => step === "AwaitQuestionAnswer").length, 3);
});

void test("AI SDK: two tools ask at once and both are answerable, and a sibling approval resolved while a tool runs never reappears", async (t) => {
  const firstGate = Promise.withResolvers<void>();
  t.after(() => firstGate.resolve());
  let firstStarted = false;
  const askingTool = (name: string) => functionTool({
    name, description: `The ${name} tool.`, parameters: { type: "object", properties: {} }, effect: "read",
    execute: async (_arguments, context): Promise<DeferredToolOutcome | string> => {
      if (context.inputAnswers.length > 0) return `${name}=${context.inputAnswers[0]?.answer ?? ""}`;
      if (name === "first") {
        firstStarted = true;
        await firstGate.promise;
      }
      return { kind: "tool_input_requested", question: `${name}?`, choices: ["a", "b"], allowsFreeText: true };
    },
  });
  const sendMail = functionTool({ name: "send_mail", description: "Send mail.", parameters: { type: "object", properties: {} }, effect: "non_idempotent_write", execute: () => "sent" });
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.turnToolResults.length > 0) return [...textParts("answer", [facts.turnToolResults.map((result) => result.output).join(", ")]), finishPart("stop")];
    return [toolCallPart("q-one", "first", "{}"), toolCallPart("q-two", "second", "{}"), toolCallPart("m-one", "send_mail", "{}"), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "ask", instructions: "Ask.", model: createAiSdkModelClient(model), tools: [askingTool("first"), askingTool("second"), sendMail] }, "AiSdkToolQuestions");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("b1", { initialMessage: "Go." });
  await pollUntil(async () => (firstStarted ? true : undefined), { description: "the first tool to run" });
  // While "first" runs: the approval is resolved and "second" is answered.
  assert.equal(await sessions.resolveInterrupt("b1", { interruptId: "m-one-approval", approved: true }), true);
  await pollUntil(async () => ((await sessions.getAgentSnapshot("b1")).pendingInterrupts.some((interrupt) => interrupt.interruptId === "q-two-input-1") ? true : undefined), { description: "the second tool's question" });
  assert.equal(await sessions.answerQuestion("b1", { interruptId: "q-two-input-1", answer: "free text is allowed" }), true);
  firstGate.resolve();
  await pollUntil(async () => ((await sessions.getAgentSnapshot("b1")).pendingInterrupts.some((interrupt) => interrupt.interruptId === "q-one-input-1") ? true : undefined), { description: "the first tool's question" });
  assert.deepEqual((await sessions.getAgentSnapshot("b1")).pendingInterrupts.map((interrupt) => interrupt.interruptId), ["q-one-input-1"], "the approval and the answered question stay resolved");
  assert.equal(await sessions.answerQuestion("b1", { interruptId: "q-one-input-1", answer: "a" }), true);
  await sessions.waitForTurnCount("b1", 1);
  assert.deepEqual(promptAsJson(model.doStreamCalls[1]?.prompt).at(-1), toolMessage([["q-one", "first", "first=a"], ["q-two", "second", "second=free text is allowed"], ["m-one", "send_mail", "sent"]]));
  assert.equal(payloadsOf(await sessions.readEvents("b1"), "interrupt_raised").length, 3);
});

void test("AI SDK: durable_wait of one day ends with SkipTimer and the provider gets the completed result", async (t) => {
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    const [result] = facts.turnToolResults;
    if (result !== undefined) return [...textParts("answer", ["Back."]), finishPart("stop")];
    return [toolCallPart(scriptedToolCallId(facts, 0), "durable_wait", '{"duration_seconds": 86400, "reason": "cool-down"}'), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow({ name: "waits", instructions: "Wait.", model: createAiSdkModelClient(model), builtInTools: ["durable_wait"] }, "AiSdkDurableWait");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("w1", { initialMessage: "Wait a day." });
  // The Timer exists once AwaitTimer's wait is committed; skip it as soon as it does.
  assert.equal(await pollUntil(async () => ((await sessions.skipTimer("w1", "call-u1-m1-0")) === 1 ? 1 : undefined), { description: "the durable wait's Timer" }), 1);
  assert.deepEqual(payloadsOf(await sessions.readEvents("w1"), "timer_started").map((payload) => [payload.tool_call_id, payload.reason]), [["call-u1-m1-0", "cool-down"]]);
  await sessions.waitForTurnCount("w1", 1);
  assert.deepEqual(promptAsJson(model.doStreamCalls[1]?.prompt).at(-1), toolMessage([["call-u1-m1-0", "durable_wait", '{"status":"completed","waited_seconds":86400,"reason":"cool-down"}']]));
});

void test("AI SDK: a plan is written with a forced write_todos, revised, approved and executed", async (t) => {
  const model = scriptedLanguageModel(anthropicIdentity, (facts) => {
    if (facts.turnToolResults.length > 0) return [...textParts("answer", ["Noted."]), finishPart("stop")];
    if (facts.lastUserText.startsWith("[Perdure] The user approved plan revision")) {
      return [toolCallPart(scriptedToolCallId(facts, 0), "write_todos", '{"todos": [{"content": "Draft", "status": "completed"}, {"content": "Review", "status": "in_progress"}]}'), finishPart("tool-calls")];
    }
    const tasks = facts.lastUserText === "Also review it" ? '[{"content": "Draft", "status": "pending"}, {"content": "Review", "status": "pending"}]' : '[{"content": "Draft", "status": "pending"}]';
    return [toolCallPart(scriptedToolCallId(facts, 0), "write_todos", `{"todos": ${tasks}}`), finishPart("tool-calls")];
  });
  const flow = createStepwiseAgentSessionFlow(
    { name: "writer", instructions: "Write.", model: createAiSdkModelClient(model), builtInTools: ["write_todos"], planModeEnabled: true, planningToolChoice: "required" },
    "AiSdkPlans",
  );
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("p1");
  assert.equal(await sessions.sendUserMessage("p1", "Write a post", { planMode: true }), true);
  await sessions.waitForTurnCount("p1", 1);
  assert.deepEqual(model.doStreamCalls[0]?.toolChoice, { type: "required" }, "the first planning call forces a tool call");
  assert.deepEqual(model.doStreamCalls[0]?.tools?.map((tool) => tool.name), ["write_todos"]);
  const note = promptAsJson(model.doStreamCalls[0]?.prompt)[1] as { role: string; content: { text: string }[] };
  assert.equal(note.role, "user");
  assert.match(note.content[0]?.text ?? "", /^\[Perdure\] This is a planning turn/);
  await sessions.sendUserMessage("p1", "Also review it");
  await sessions.waitForTurnCount("p1", 2);
  assert.notDeepEqual(model.doStreamCalls[2]?.toolChoice, { type: "required" }, "a draft exists: the model may answer in text");
  const draft = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(draft.plan && [draft.plan.revision, draft.plan.status, draft.plan.tasks.length], [2, "draft", 2]);
  assert.equal(await sessions.executePlan("p1", { revision: 2 }), true);
  await sessions.waitForTurnCount("p1", 3);
  const done = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(done.plan && [done.plan.revision, done.plan.status, done.plan.tasks.map((task) => task.status)], [3, "active", ["completed", "in_progress"]]);
  assert.equal(done.state?.interactionMode, "executing");
  assert.deepEqual(payloadsOf(await sessions.readEvents("p1"), "plan_execution_started"), [{ revision: 2 }]);
});
