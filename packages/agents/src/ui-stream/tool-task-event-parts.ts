/**
 * The parts of tool task events (docs/decisions/2026-12-03-turn-control-and-
 * tool-tasks-in-ui-streams.md): `tool_task_started` shows the call and its
 * task part; a question the task asks, its resolution, and the call's final
 * status each send the task part again with the new status. Text a poll
 * writes is the tool's, not the model's.
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { chunk, enterStepOfResponse, payloadString, showToolCall } from "./agent-event-part-steps.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";
import type { PlannedAgentUIPart } from "./planned-agent-ui-part.ts";
import type { AgentToolTaskStatus } from "../contract/ui-stream/data-parts.ts";
import { isFinalToolTaskStatus, toolTaskChunk } from "./tool-task-data-parts.ts";

/** `tool_task_started`: the call's tool part, then its task part in `running`. False when the payload lacks its IDs. */
export function planToolTaskStarted(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const toolCallId = payloadString(event, "tool_call_id");
  const taskId = payloadString(event, "task_id");
  if (toolCallId === null || taskId === null) return false;
  if (!enterStepOfResponse(state, event, parts)) return true;
  const toolName = payloadString(event, "tool_name") ?? "";
  showToolCall(state, toolCallId, toolName, parts);
  const task = { toolCallId, toolName, taskId, status: "running" as const };
  state.shownTasks = [...state.shownTasks.filter((shown) => shown.toolCallId !== toolCallId), task];
  parts.push(chunk(toolTaskChunk(task)));
  return true;
}

/**
 * Sends the task part of `toolCallId` again with `status`, when the stream
 * showed that task and its status changes; nothing otherwise.
 */
export function planToolTaskStatus(state: AgentUIStreamState, toolCallId: string, status: AgentToolTaskStatus, parts: PlannedAgentUIPart[]): void {
  const task = state.shownTasks.find((shown) => shown.toolCallId === toolCallId);
  if (task === undefined || task.status === status || isFinalToolTaskStatus(task.status)) return;
  task.status = status;
  parts.push(chunk(toolTaskChunk(task)));
}

/**
 * Whether a text or reasoning delta belongs to a task poll: it comes from a
 * Step execution other than the current model call while a task of the
 * current response still runs. The next model call cannot start before
 * every call of the response, tasks included, has its result.
 */
export function isToolTaskPollOutput(state: AgentUIStreamState, event: AgentEvent): boolean {
  return state.step !== null && state.step.executionId !== event.stepExecutionId && state.shownTasks.some((task) => !isFinalToolTaskStatus(task.status));
}
