/**
 * The data part of a tool task: remote work a tool started and the session
 * polls (`tool_task_started`), with its latest status. It has the tool call
 * ID as its `id`, so each status replaces the previous one in the message.
 * docs/decisions/2026-12-03-turn-control-and-tool-tasks-in-ui-streams.md
 */
import type { AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import type { AgentToolTaskChunk, AgentToolTaskStatus } from "../contract/ui-stream/data-parts.ts";

/** What the stream state keeps of a task it showed, to send its next status. */
export interface ShownToolTask {
  toolCallId: string;
  toolName: string;
  taskId: string;
  status: AgentToolTaskStatus;
}

/** Whether a task status is a final one: the call is over. */
export function isFinalToolTaskStatus(status: AgentToolTaskStatus): boolean {
  return status !== "running" && status !== "awaiting_answer";
}

/** The part of a task the stream showed, with `status`. */
export function toolTaskChunk(task: ShownToolTask, cancellationReason: string | null = null): AgentToolTaskChunk {
  return {
    type: "data-agent-tool-task",
    id: task.toolCallId,
    data: { toolCallId: task.toolCallId, toolName: task.toolName, taskId: task.taskId, status: task.status, pollIntervalSeconds: null, cancellationReason },
  };
}

/** The task part of a stored record that started a task, for snapshots; undefined for a record without one. */
export function toolTaskChunkFromRecord(record: AgentToolCallRecord): AgentToolTaskChunk | undefined {
  if (record.taskId === undefined) return undefined;
  const status: AgentToolTaskStatus = record.status === "awaiting_answer"
    ? "awaiting_answer"
    : record.status === "succeeded" || record.status === "failed" || record.status === "rejected" || record.status === "outcome_unknown"
      ? record.status
      : "running";
  return {
    type: "data-agent-tool-task",
    id: record.toolCallId,
    data: {
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      taskId: record.taskId,
      status,
      pollIntervalSeconds: record.taskPollIntervalSeconds ?? null,
      cancellationReason: record.cancellationReason ?? null,
    },
  };
}
