/**
 * How the session replaces and approves its plan: `write_todos` in
 * `RunModel`'s commit, and an approved revision in `AwaitUserMessage`.
 */
import type { StepContext } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import type { AgentPlan, AgentPlanStatus, AgentPlanTask } from "../../contract/values/agent-plan.ts";
import type { InteractionMode } from "../../contract/values/agent-state.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import { isoNow } from "../session-operations.ts";

/** A written plan's status: no tasks is `cleared`, a planning turn writes a `draft`, all completed is `completed`, else `active`. */
export function planStatusAfterWrite(tasks: readonly AgentPlanTask[], interactionMode: InteractionMode): AgentPlanStatus {
  if (tasks.length === 0) return "cleared";
  if (interactionMode === "planning") return "draft";
  return tasks.every((task) => task.status === "completed") ? "completed" : "active";
}

async function writePlanUpdatedEvent(events: AgentEventWriter, plan: AgentPlan): Promise<void> {
  await events.write("plan_updated", { revision: plan.revision, status: plan.status, task_count: plan.tasks.length });
}

/**
 * Replaces the plan with `tasks` as revision + 1, writes `plan_updated`, and
 * returns the result the model sees.
 */
export async function replacePlan(
  context: StepContext,
  persistence: AgentSessionPersistence,
  tasks: AgentPlanTask[],
  interactionMode: InteractionMode,
  events: AgentEventWriter,
): Promise<string> {
  const previous = context.read(persistence.agentPlan);
  const plan: AgentPlan = { revision: (previous?.revision ?? 0) + 1, status: planStatusAfterWrite(tasks, interactionMode), tasks, updatedAt: isoNow(context) };
  context.write(persistence.agentPlan, plan);
  // An approval of the replaced revision can never run now; it must not keep execute_plan refusing the new one.
  if (context.read(persistence.pendingPlanExecution) !== undefined) context.write(persistence.pendingPlanExecution, null);
  await writePlanUpdatedEvent(events, plan);
  return plan.status === "cleared"
    ? JSON.stringify({ status: "cleared", revision: plan.revision })
    : JSON.stringify({ status: "updated", revision: plan.revision, task_count: plan.tasks.length });
}

/** Marks an approved plan `active` (writing `plan_updated` when it was a draft); returns it. */
export async function activatePlan(context: StepContext, persistence: AgentSessionPersistence, plan: AgentPlan, events: AgentEventWriter): Promise<AgentPlan> {
  if (plan.status !== "draft") return plan;
  const active: AgentPlan = { ...plan, status: "active", updatedAt: isoNow(context) };
  context.write(persistence.agentPlan, active);
  await writePlanUpdatedEvent(events, active);
  return active;
}
