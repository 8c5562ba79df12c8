import type { AgentPlan, AgentPlanStatus } from "../contract/values/agent-plan.ts";
import { agentPlanPartId, type AgentPlanChunk } from "../contract/ui-stream/data-parts.ts";

const planStatuses: readonly string[] = ["draft", "active", "completed", "cleared"];

/**
 * The plan part of a `plan_updated` event: the event's revision, status and
 * task count, with the tasks of the committed plan while it still has that
 * revision. A later revision's tasks never appear under an earlier number; a
 * later `plan_updated` brings them.
 */
export function planChunk(update: { revision: number; status: string; taskCount: number }, committed: AgentPlan | undefined): AgentPlanChunk {
  const status = (planStatuses.includes(update.status) ? update.status : "active") as AgentPlanStatus;
  const tasks = committed?.revision === update.revision ? committed.tasks.map((task) => ({ content: task.content, status: task.status })) : null;
  return { type: "data-agent-plan", id: agentPlanPartId, data: { revision: update.revision, status, taskCount: update.taskCount, tasks } };
}
