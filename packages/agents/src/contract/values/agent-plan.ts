/**
 * The session's plan (`AgentPlan`), which `write_todos` replaces as a whole,
 * and the approval that `execute_plan` records (`PlanExecutionRequest`).
 */
import { asWireObject, readNumber, readString, type WireObject } from "./wire.ts";

/** A task's progress. */
export type AgentPlanTaskStatus = "pending" | "in_progress" | "completed";

/**
 * The plan's state: `draft` while a planning turn wrote it and nobody
 * approved it, `active` once approved or written outside planning,
 * `completed` when every task is, and `cleared` when it has no tasks.
 */
export type AgentPlanStatus = "draft" | "active" | "completed" | "cleared";

/** One task of the plan. */
export interface AgentPlanTask {
  content: string;
  status: AgentPlanTaskStatus;
}

/** The `AgentPlan` Attribute: unset until `write_todos` first succeeds. */
export interface AgentPlan {
  /** 1 for the first plan; each successful `write_todos` adds 1. */
  revision: number;
  status: AgentPlanStatus;
  tasks: AgentPlanTask[];
  /** ISO 8601 time of the latest change. */
  updatedAt: string;
}

/** `PendingPlanExecution` and the `PlanExecutions` messages: an approved plan revision. */
export interface PlanExecutionRequest {
  revision: number;
}

export const agentPlanTaskStatuses: readonly AgentPlanTaskStatus[] = ["pending", "in_progress", "completed"];
const planStatuses: readonly AgentPlanStatus[] = ["draft", "active", "completed", "cleared"];

/** The `PlanExecutions` ChannelMap key of a revision: its decimal number. */
export function planExecutionKey(revision: number): string {
  if (!Number.isSafeInteger(revision) || revision < 1) throw new RangeError(`plan revision ${String(revision)} is invalid: use a positive integer`);
  return String(revision);
}

export function agentPlanToWire(plan: AgentPlan): WireObject {
  return {
    revision: plan.revision,
    status: plan.status,
    tasks: plan.tasks.map((task) => ({ content: task.content, status: task.status })),
    updated_at: plan.updatedAt,
  };
}

export function agentPlanFromWire(data: unknown): AgentPlan {
  const object = asWireObject(data, "AgentPlan");
  const status = readString(object, "status", "active");
  const tasks = Array.isArray(object.tasks) ? object.tasks : [];
  return {
    revision: readNumber(object, "revision", 1),
    status: (planStatuses as readonly string[]).includes(status) ? (status as AgentPlanStatus) : "active",
    tasks: tasks.map((task) => {
      const taskObject = asWireObject(task, "AgentPlanTask");
      const taskStatus = readString(taskObject, "status", "pending");
      return {
        content: readString(taskObject, "content", ""),
        status: (agentPlanTaskStatuses as readonly string[]).includes(taskStatus) ? (taskStatus as AgentPlanTaskStatus) : "pending",
      };
    }),
    updatedAt: readString(object, "updated_at", ""),
  };
}

export function planExecutionRequestToWire(request: PlanExecutionRequest): WireObject {
  return { revision: request.revision };
}

export function planExecutionRequestFromWire(data: unknown): PlanExecutionRequest {
  return { revision: readNumber(asWireObject(data, "PlanExecutionRequest"), "revision", 0) };
}
