/**
 * A Stepwise session Flow with a tool task, for the SIGKILL tests: Worker
 * child processes run it (see `stepwise-tool-task-worker-main.ts`) and the
 * test process uses the same definition to start sessions and read them.
 * Task starts, polls and cancellations are recorded in an InvocationLog, and
 * the Worker parks at FileGates, both in the folder named by
 * `PERDURE_TOOL_TASK_CRASH_DIRECTORY`.
 */
import { join } from "node:path";
import { FileGate } from "../../testing/file-gate.ts";
import { InvocationLog } from "../../testing/invocation-log.ts";
import { createStepwiseAgentSessionFlow } from "../create-stepwise-agent-session-flow.ts";
import { functionTool } from "../function-tool.ts";
import { ScriptedModelClient } from "../scripted-model-client.ts";

export const toolTaskCrashDirectoryEnvironmentVariable = "PERDURE_TOOL_TASK_CRASH_DIRECTORY";

export const toolTaskCrashGateNames = {
  /** After the job started and its ID was saved as the checkpoint, before the tool Step commits (first attempt only). */
  afterStart: "tool-task-after-start",
  /** Inside every poll, before it reads the job. */
  poll: "tool-task-poll",
} as const;

export function toolTaskCrashLog(directory: string): InvocationLog {
  return new InvocationLog(join(directory, "tool-task-invocations.log"));
}

function crashDirectory(): string {
  const directory = process.env[toolTaskCrashDirectoryEnvironmentVariable];
  if (directory === undefined || directory === "") throw new Error(`set ${toolTaskCrashDirectoryEnvironmentVariable} to the crash test's folder`);
  return directory;
}

/** An idempotent write that starts a remote job and hands its ID back as a task. */
const buildReport = functionTool({
  name: "build_report", description: "Builds a report.", parameters: { type: "object", properties: {} }, effect: "idempotent_write", requiresApproval: false,
  execute: async (_arguments, context) => {
    if (context.heartbeatCheckpoint !== undefined) return { kind: "tool_task_started", taskId: context.heartbeatCheckpoint, pollIntervalSeconds: 1 };
    const log = toolTaskCrashLog(crashDirectory());
    const jobId = `job-${context.toolCallId}`;
    log.record("job_started", { jobId, attempt: context.attempt, idempotencyKey: context.idempotencyKey });
    await context.saveHeartbeatCheckpoint(jobId);
    await new FileGate(crashDirectory(), toolTaskCrashGateNames.afterStart).waitUntilOpen({ signal: context.signal });
    return { kind: "tool_task_started", taskId: jobId, pollIntervalSeconds: 1 };
  },
  pollTask: async (poll) => {
    toolTaskCrashLog(crashDirectory()).record("poll", { taskId: poll.toolCall.taskId, attempt: poll.attempt });
    await new FileGate(crashDirectory(), toolTaskCrashGateNames.poll).waitUntilOpen({ signal: poll.cancellationSignal });
    return { output: `report ${poll.toolCall.taskId ?? ""} is ready` };
  },
  cancelTask: async (cancellation) => {
    toolTaskCrashLog(crashDirectory()).record("job_cancelled", { taskId: cancellation.toolCall.taskId, attempt: cancellation.attempt });
  },
});

export const crashToolTaskFlow = createStepwiseAgentSessionFlow({
  name: "crash-task", instructions: "Report.", tools: [buildReport],
  model: new ScriptedModelClient((request) => {
    const results = ScriptedModelClient.toolResults(request);
    if (results.length > 0 || request.turnId !== "turn-1") return { text: `Results: ${results.map((result) => result.output).join(" | ")}` };
    return { text: "Starting.", toolCalls: [{ name: "build_report", id: "report" }] };
  }),
}, "CrashToolTask");

export const toolTaskCrashFlows = [crashToolTaskFlow] as const;
