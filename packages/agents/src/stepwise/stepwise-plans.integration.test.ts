/**
 * Plans and plan mode under Stepwise with the ScriptedModelClient, on a real
 * SQLite engine: a plan written in a planning turn, revised by feedback,
 * approved with `execute_plan` and executed; `write_todos` settled in
 * `RunModel`'s commit with its result texts and failures; and decoded values
 * that omit plan fields at their defaults.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidInputError } from "@perdure/engine";
import { createAgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { ScriptedAgentRunner } from "../testing/scripted-agent-runner.ts";
import { readStepHistory } from "../testing/read-step-history.ts";
import { agentSnapshotToWire } from "../contract/values/agent-snapshot.ts";
import { agentStateToWire } from "../contract/values/agent-state.ts";
import { createStepwiseAgentSessionFlow } from "./create-stepwise-agent-session-flow.ts";
import { functionTool } from "./function-tool.ts";
import type { ModelRequest } from "./model-client.ts";
import { ScriptedModelClient, type ScriptedModelReply } from "./scripted-model-client.ts";
import { completedExecutes, payloadsOf, startStepwiseTestAgent } from "./test-fixtures/stepwise-test-agent.ts";

const executingMessage = (revision: number) => `[Perdure] The user approved plan revision ${revision}. Execute it and keep the task statuses current with write_todos.`;

function todos(...tasks: [content: string, status: string][]): { todos: { content: string; status: string }[] } {
  return { todos: tasks.map(([content, status]) => ({ content, status })) };
}

/** Plans the migration, revises it on feedback, and executes an approved plan, keeping statuses current. */
function migrationModel(request: ModelRequest): ScriptedModelReply {
  const results = ScriptedModelClient.toolResults(request);
  const lastUser = ScriptedModelClient.userTexts(request).at(-1) ?? "";
  if (results.length > 0) return { text: `Done: ${results.map((result) => `${result.toolName} ${result.output}`).join(" | ")}` };
  if (lastUser === "Plan the migration") {
    return { toolCalls: [{ name: "write_todos", arguments: todos(["Copy the data", "pending"], ["Switch traffic", "pending"]) }, { name: "run_query", arguments: {} }] };
  }
  if (lastUser === "Add a backup first") {
    return { toolCalls: [{ name: "write_todos", arguments: todos(["Back up", "pending"], ["Copy the data", "pending"], ["Switch traffic", "pending"]) }] };
  }
  if (lastUser.startsWith("[Perdure] The user approved plan revision")) {
    return { toolCalls: [{ name: "run_query", arguments: {} }, { name: "write_todos", arguments: todos(["Back up", "completed"], ["Copy the data", "completed"], ["Switch traffic", "completed"]) }] };
  }
  return { text: "OK." };
}

void test("a plan is written in a planning turn, revised by feedback, approved with execute_plan, and executed in an executing turn", async (t) => {
  let queries = 0;
  const runQuery = functionTool({ name: "run_query", description: "Run a query.", parameters: { type: "object", properties: {} }, effect: "read", execute: () => { queries += 1; return "42 rows"; } });
  const model = new ScriptedModelClient(migrationModel);
  const flow = createStepwiseAgentSessionFlow(
    { name: "migrator", instructions: (context) => `Mode ${context.interactionMode}, plan ${context.plan?.revision ?? "none"}.`, model, tools: [runQuery], builtInTools: ["ask_user", "write_todos"], planModeEnabled: true },
    "StepwisePlans",
  );
  const { engine, sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("p1");

  // Planning turn: only write_todos is offered, and the other call is rejected in RunModel's commit.
  assert.equal(await sessions.sendUserMessage("p1", "Plan the migration", { planMode: true }), true);
  const planned = await sessions.waitForTurnCount("p1", 1);
  assert.equal(planned.interactionMode, "planning");
  assert.deepEqual(model.requests[0]?.tools.map((tool) => tool.name), ["write_todos"]);
  assert.equal(model.requests[0]?.instructions, "Mode planning, plan none.");
  const firstInput = model.requests[0]?.input ?? [];
  assert.equal(firstInput.length, 2, "the plan note, then the turn's user message");
  assert.match(firstInput[0]?.type === "user_text" ? firstInput[0].text : "", /^\[Perdure\] This is a planning turn/);
  assert.deepEqual(firstInput[1], { type: "user_text", text: "Plan the migration" });
  assert.equal(queries, 0, "a planning turn runs no other tool");
  let snapshot = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(snapshot.plan && [snapshot.plan.revision, snapshot.plan.status, snapshot.plan.tasks], [1, "draft", [{ content: "Copy the data", status: "pending" }, { content: "Switch traffic", status: "pending" }]]);
  assert.equal(snapshot.messages.at(-1)?.text, 'Done: write_todos {"status":"updated","revision":1,"task_count":2} | run_query The tool call was not run: a planning turn can only call write_todos.');

  // Feedback on a draft is an ordinary message that revises it in another planning turn.
  assert.equal(await sessions.sendUserMessage("p1", "Add a backup first"), true);
  await sessions.waitForTurnCount("p1", 2);
  assert.deepEqual(model.requests[2]?.tools.map((tool) => tool.name), ["write_todos"], "a draft makes the next message plan");
  const revisionNote = model.requests[2]?.input.at(-2);
  assert.ok(revisionNote?.type === "user_text" && revisionNote.text.includes("The current draft plan (revision 1)") && revisionNote.text.includes("1. [pending] Copy the data"), "the model sees the draft before the turn's message");
  snapshot = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(snapshot.plan && [snapshot.plan.revision, snapshot.plan.status, snapshot.plan.tasks.length], [2, "draft", 3]);

  // Only the current revision can be approved, once.
  assert.equal(await sessions.executePlan("p1", { revision: 1 }), false, "a replaced revision");
  assert.equal(await sessions.executePlan("p1", { revision: 2 }), true);
  assert.equal(await sessions.executePlan("p1", { revision: 2 }), false, "already pending or running");
  const executed = await sessions.waitForTurnCount("p1", 3);
  assert.equal(executed.interactionMode, "executing");
  assert.equal(queries, 1);
  const executing = model.requests[4];
  assert.deepEqual(executing?.tools.map((tool) => tool.name), ["run_query", "ask_user", "write_todos"], "an executing turn offers every tool");
  assert.deepEqual(executing?.input.at(-1), { type: "user_text", text: executingMessage(2) });
  assert.match(executing?.input.at(-2)?.type === "user_text" ? (executing.input.at(-2) as { text: string }).text : "", /^\[Perdure\] The current plan \(revision 2, active\):\n1\. \[pending\] Back up/);
  snapshot = await sessions.getAgentSnapshot("p1");
  assert.deepEqual(snapshot.plan && [snapshot.plan.revision, snapshot.plan.status], [3, "completed"]);
  assert.equal(snapshot.messages.find((message) => message.turnId === "turn-3")?.text, executingMessage(2));
  assert.equal(await sessions.executePlan("p1", { revision: 3 }), false, "a completed plan is not executable");

  const events = await sessions.readEvents("p1");
  assert.deepEqual(payloadsOf(events, "plan_updated"), [
    { revision: 1, status: "draft", task_count: 2 },
    { revision: 2, status: "draft", task_count: 3 },
    { revision: 2, status: "active", task_count: 3 },
    { revision: 3, status: "completed", task_count: 3 },
  ]);
  assert.deepEqual(payloadsOf(events, "plan_execution_started"), [{ revision: 2 }]);
  const turnThree = events.filter((event) => event.turnId === "turn-3").map((event) => event.type);
  assert.deepEqual(turnThree.slice(0, 3), ["turn_started", "plan_updated", "plan_execution_started"]);
  const history = await readStepHistory(engine.address, "p1");
  assert.deepEqual(completedExecutes(history).slice(-5), ["AwaitUserMessage", "RunModel", "CallTool", "ResumeTurn", "RunModel"], "write_todos runs no tool Step");
  const [pendingExecution] = await sessions.client.getAttributes("p1", flow.pendingPlanExecution);
  assert.equal(pendingExecution, undefined, "AwaitUserMessage consumed the approval");
});

void test("write_todos: more than one call in a response fails each, invalid todos fail, and an empty list clears the plan", async (t) => {
  const model = new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0) return { text: results.map((result) => result.output).join(" | ") };
    const lastUser = ScriptedModelClient.userTexts(request).at(-1);
    if (lastUser === "twice") return { toolCalls: [{ name: "write_todos", arguments: todos(["a", "pending"]) }, { name: "write_todos", arguments: todos(["b", "pending"]) }] };
    if (lastUser === "invalid") {
      return { toolCalls: [{ name: "write_todos", arguments: todos(["a", "done"]) }] };
    }
    if (lastUser === "write") return { toolCalls: [{ name: "write_todos", arguments: todos(["a", "in_progress"], ["b", "pending"]) }] };
    return { toolCalls: [{ name: "write_todos", arguments: { todos: [] } }] };
  });
  const flow = createStepwiseAgentSessionFlow({ name: "todo", instructions: "x", model, builtInTools: ["write_todos"] }, "StepwiseWriteTodos");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("w1", { initialMessage: "twice" });
  await sessions.waitForTurnCount("w1", 1);
  assert.equal((await sessions.getAgentSnapshot("w1")).messages.at(-1)?.text, "write_todos was called more than once in one response | write_todos was called more than once in one response");
  await sessions.sendUserMessage("w1", "invalid");
  await sessions.waitForTurnCount("w1", 2);
  assert.equal((await sessions.getAgentSnapshot("w1")).messages.at(-1)?.text, "invalid todos: todos[0].status must be one of 'pending', 'in_progress', 'completed', got 'done'");
  assert.equal((await sessions.getAgentSnapshot("w1")).plan, undefined, "no plan yet: the snapshot omits it");
  await sessions.sendUserMessage("w1", "write");
  await sessions.waitForTurnCount("w1", 3);
  const written = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(written.plan && [written.plan.revision, written.plan.status], [1, "active"], "written outside planning, the plan is active");
  assert.equal(written.messages.at(-1)?.text, '{"status":"updated","revision":1,"task_count":2}');
  await sessions.sendUserMessage("w1", "clear");
  await sessions.waitForTurnCount("w1", 4);
  const cleared = await sessions.getAgentSnapshot("w1");
  assert.deepEqual(cleared.plan && [cleared.plan.revision, cleared.plan.status, cleared.plan.tasks], [2, "cleared", []]);
  assert.equal(cleared.messages.at(-1)?.text, '{"status":"cleared","revision":2}');
  assert.equal(await sessions.sendUserMessage("w1", "plan it", { planMode: true }), false, "plan mode is off");
});

void test("a session that uses no plans decodes to its 0.1.0 shape, while the wire carries every plan field", async (t) => {
  const flow = createAgentSessionFlow(new ScriptedAgentRunner(() => ({ text: "hi" })), "NoPlans");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("n1", { initialMessage: "hello" });
  const state = await sessions.waitForTurnCount("n1", 1);
  assert.equal(Object.hasOwn(state, "interactionMode"), false);
  const snapshot = await sessions.getAgentSnapshot("n1");
  assert.equal(Object.hasOwn(snapshot, "plan"), false);
  assert.equal(agentStateToWire(state).interaction_mode, "chat");
  assert.equal(agentSnapshotToWire(snapshot).plan, null);
  assert.equal(await sessions.sendUserMessage("n1", "plan please", { planMode: true }), false, "plan mode is off");
  assert.throws(() => createAgentSessionFlow(new ScriptedAgentRunner(() => ({ text: "x" })), "NoPlanRunner", { builtInTools: ["write_todos"], planModeEnabled: true }),
    (error: unknown) => InvalidInputError.isInstance(error) && /^planModeEnabled needs a runner whose supportsPlanMode is true/.test((error as Error).message));
  assert.throws(() => createStepwiseAgentSessionFlow({ name: "x", instructions: "x", model: new ScriptedModelClient(() => ({ text: "" })), planModeEnabled: true }, "NoWriteTodos"),
    /planModeEnabled, which needs "write_todos" in builtInTools/);
});

void test("planningToolChoice required forces write_todos on the first model call of a planning turn while no draft exists", async (t) => {
  const model = new ScriptedModelClient((request) => (ScriptedModelClient.toolResults(request).length > 0 || request.toolChoice !== "required"
    ? { text: "Planned." }
    : { toolCalls: [{ name: "write_todos", arguments: todos(["Step one", "pending"]) }] }));
  const flow = createStepwiseAgentSessionFlow({ name: "forced", instructions: "x", model, builtInTools: ["write_todos"], planModeEnabled: true, planningToolChoice: "required" }, "StepwiseForcedPlan");
  const { sessions } = await startStepwiseTestAgent(t, [flow]);
  await sessions.start("f1");
  await sessions.sendUserMessage("f1", "Plan it", { planMode: true });
  await sessions.waitForTurnCount("f1", 1);
  await sessions.sendUserMessage("f1", "Looks good but shorter");
  await sessions.waitForTurnCount("f1", 2);
  assert.deepEqual(model.requests.map((request) => request.toolChoice ?? "auto"), ["required", "auto", "auto"], "only the first call of a planning turn without a draft is forced");
});
