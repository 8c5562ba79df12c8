import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentPlan } from "./values/agent-plan.ts";
import { agentPlanFromWire, agentPlanToWire, planExecutionKey } from "./values/agent-plan.ts";
import { buildPlanNote } from "./plan-note.ts";
import type { StepContext } from "@perdure/engine";
import { createAgentSessionPersistence } from "../session/persistence.ts";
import { planStatusAfterWrite, replacePlan } from "../session/plans/plan-writes.ts";

const plan: AgentPlan = { revision: 3, status: "active", tasks: [{ content: "Back up", status: "completed" }, { content: "Migrate", status: "in_progress" }], updatedAt: "2026-12-03T10:00:00.000Z" };

test("buildPlanNote shows the plan in chat and executing turns, asks for one in planning turns, and says nothing without tasks", () => {
  assert.equal(buildPlanNote(plan, "executing"), [
    "[Perdure] The current plan (revision 3, active):", "1. [completed] Back up", "2. [in_progress] Migrate",
    "Keep the task statuses current with write_todos as you work: send the whole list each time.",
  ].join("\n"));
  assert.equal(buildPlanNote(null, "chat"), null);
  assert.equal(buildPlanNote({ ...plan, status: "cleared", tasks: [] }, "chat"), null);
  const planning = buildPlanNote(null, "planning") ?? "";
  assert.match(planning, /^\[Perdure\] This is a planning turn/);
  assert.match(planning, /write_todos/);
  const revising = buildPlanNote({ ...plan, status: "draft" }, "planning") ?? "";
  assert.ok(revising.startsWith(planning) && revising.includes("The current draft plan (revision 3); revise it as the user asks:\n1. [completed] Back up"));
});

test("a written plan's status: cleared, draft while planning, completed, else active", () => {
  assert.equal(planStatusAfterWrite([], "planning"), "cleared");
  assert.equal(planStatusAfterWrite(plan.tasks, "planning"), "draft");
  assert.equal(planStatusAfterWrite([{ content: "a", status: "completed" }], "executing"), "completed");
  assert.equal(planStatusAfterWrite(plan.tasks, "chat"), "active");
});

test("AgentPlan round-trips through its wire JSON, and planExecutionKey is the decimal revision", () => {
  assert.deepEqual(agentPlanToWire(plan), { revision: 3, status: "active", tasks: [{ content: "Back up", status: "completed" }, { content: "Migrate", status: "in_progress" }], updated_at: "2026-12-03T10:00:00.000Z" });
  assert.deepEqual(agentPlanFromWire(JSON.parse(JSON.stringify(agentPlanToWire(plan)))), plan);
  assert.equal(planExecutionKey(12), "12");
  assert.throws(() => planExecutionKey(0), /plan revision 0 is invalid/);
});

test("replacePlan writes revision + 1 and drops an approval of the replaced revision, so execute_plan can approve the new one", async () => {
  const persistence = createAgentSessionPersistence({ eventStreamCapacityBytes: 1024 });
  const values = new Map<string, unknown>([["AgentPlan", { ...plan, status: "draft" }], ["PendingPlanExecution", { revision: 3 }]]);
  const context = {
    read: (ref: { name: string }) => values.get(ref.name),
    write: (ref: { name: string }, value: unknown) => (value === null ? values.delete(ref.name) : values.set(ref.name, value)),
    now: () => Date.parse("2026-12-06T10:00:00.000Z"),
  } as unknown as StepContext;
  const written: unknown[] = [];
  const events = { write: async (type: string, payload: unknown) => { written.push([type, payload]); }, textDelta: async () => {}, reasoningDelta: async () => {} };
  const result = await replacePlan(context, persistence, [{ content: "Only step", status: "pending" }], "planning", events);
  assert.equal(result, '{"status":"updated","revision":4,"task_count":1}');
  assert.deepEqual((values.get("AgentPlan") as AgentPlan).status, "draft");
  assert.equal((values.get("AgentPlan") as AgentPlan).updatedAt, "2026-12-06T10:00:00.000Z", "the plan's time comes from the store's clock");
  assert.equal(values.has("PendingPlanExecution"), false);
  assert.deepEqual(written, [["plan_updated", { revision: 4, status: "draft", task_count: 1 }]]);
});
