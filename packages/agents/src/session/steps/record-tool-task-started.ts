/**
 * A tool Step whose tool returned `ToolTaskStarted`: it records
 * `waiting_for_task` with the task ID and poll interval, writes
 * `tool_task_started`, and moves to `PollToolTask`. A runner without
 * `pollToolTask` gets the call recorded by effect with `missingToolTaskPoller`.
 */
import { deadEnd, moveTo, TerminalError, type ExecuteContext, type StepDecision } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import type { AgentToolCall, AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { failedToolResult, missingToolTaskPoller, outcomeUnknownToolResult } from "../../contract/values/result-texts.ts";
import { withoutFields } from "../../contract/values/wire.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { normalizePollIntervalSeconds, pollToolTaskMovementOptions } from "./poll-tool-task.ts";

export async function recordToolTaskStarted(
  context: ExecuteContext,
  environment: SessionEnvironment,
  toolCall: AgentToolCall,
  started: unknown,
  events: AgentEventWriter,
): Promise<StepDecision> {
  const { persistence, runner } = environment;
  if (runner.pollToolTask === undefined) {
    if (toolCall.effect === "read") {
      await finishToolCall(context, persistence, toolCall, "failed", { output: failedToolResult(missingToolTaskPoller), error: missingToolTaskPoller }, events);
    } else {
      await finishToolCall(context, persistence, toolCall, "outcome_unknown", { output: outcomeUnknownToolResult, error: missingToolTaskPoller }, events);
    }
    return deadEnd();
  }
  const { taskId, pollIntervalSeconds } = started as { taskId?: unknown; pollIntervalSeconds?: unknown };
  if (typeof taskId !== "string" || taskId === "") {
    throw new TerminalError(`executeDeferredToolCall for ${toolCall.toolName} returned tool_task_started with taskId ${JSON.stringify(taskId)}; use a non-empty string`);
  }
  const interval = normalizePollIntervalSeconds(pollIntervalSeconds, `executeDeferredToolCall for ${toolCall.toolName}`);
  // The task ID is the started job's checkpoint: an attempt that dies before this commit hands it to the next.
  if (context.heartbeatCheckpoint !== taskId) await context.heartbeat(taskId);
  const record: AgentToolCallRecord = {
    ...withoutFields(toolCall, ["inputContinuation"]),
    status: "waiting_for_task",
    taskId,
    taskPollIntervalSeconds: interval,
  };
  context.write(persistence.agentToolCalls.instance(toolCall.toolCallId), record);
  await events.write("tool_task_started", { tool_call_id: toolCall.toolCallId, tool_name: toolCall.toolName, task_id: taskId });
  return moveTo(AgentStepType.PollToolTask, toolCall.toolCallId, pollToolTaskMovementOptions(record));
}
