import { anyOf, deadEnd, defineStep, moveTo, received, TerminalError, timer, type ExecuteContext, type StepDecision, type StepDefinition } from "@perdure/engine";
import { durableBoundary } from "@perdure/engine/internal";
import type { DeferredToolExecution } from "../../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../../contract/tool-execution-error.ts";
import { runInToolExecution } from "../../contract/tool-execution-scope.ts";
import { approvalInterruptId } from "../../contract/values/agent-interrupt.ts";
import type { AgentToolCall, AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import {
  approvalDeadlinePassed,
  failedToolResult,
  outcomeUnknownAfterToolErrorResult,
  outcomeUnknownToolResult,
  rejectedToolResult,
  toolCallNotRunErrorPrefix,
} from "../../contract/values/result-texts.ts";
import { createEventWriter, withBackgroundHeartbeat } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, isoNow, readToolCall, readToolCallIfStored } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { emitActivationRoot, withTraceContext } from "../../tracing/activation-root.ts";
import { withToolSpan } from "../../tracing/tool-span.ts";
import { toolStepFor } from "./defer-tool-calls.ts";
import { recordToolQuestion } from "./record-tool-question.ts";
import { recordToolTaskStarted } from "./record-tool-task-started.ts";
import { parseToolCallId, recordRetry, toolCallLoads, toolStepMovementOptions } from "./tool-step-input.ts";
import { isTurnCancelled, recordCancelledCall, resolveCancelledInterrupt, turnControlOf } from "./turn-control-checks.ts";

/** `AwaitToolApproval`: waits for the approval's resolution or its deadline. */
export function createAwaitToolApprovalStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.AwaitToolApproval, {
    load: (input) => [persistence.agentToolCalls.instance(parseToolCallId(input))],
    executeOptions: { locks: [persistence.pendingInterrupts], retry: recordRetry },
    waitUntil: (context, input) => {
      const interruptId = approvalInterruptId(parseToolCallId(input));
      const interrupt = (context.read(persistence.pendingInterrupts) ?? []).find((pending) => pending.interruptId === interruptId);
      const cancellation = received(persistence.toolCallCancellations.instance(parseToolCallId(input)));
      const resolution = received(persistence.interruptResolutions.instance(interruptId));
      return interrupt?.deadline === null || interrupt?.deadline === undefined
        ? anyOf(cancellation, resolution)
        : anyOf(cancellation, resolution, timer("deadline", { at: Date.parse(interrupt.deadline) }));
    },
    execute: async (context, input) => {
      const toolCallId = parseToolCallId(input);
      const interruptId = approvalInterruptId(toolCallId);
      const record = readToolCall(context, persistence, toolCallId);
      const events = createEventWriter(context, persistence, record.turnId);
      if (isFinalToolCallStatus(record.status)) return deadEnd();
      const [cancelled] = context.consumed(persistence.toolCallCancellations.instance(toolCallId));
      if (cancelled !== undefined && !context.timerFired("deadline")) {
        await resolveCancelledInterrupt(context, environment, { interruptId, kind: "approval" }, cancelled.message.reason, events);
        await recordCancelledCall(context, environment, record, cancelled.message.reason, events);
        return deadEnd();
      }
      const pending = context.read(persistence.pendingInterrupts) ?? [];
      if (pending.some((interrupt) => interrupt.interruptId === interruptId)) {
        context.write(persistence.pendingInterrupts, pending.filter((interrupt) => interrupt.interruptId !== interruptId));
      }
      const [resolution] = context.consumed(persistence.interruptResolutions.instance(interruptId));
      // An answer or an expired deadline starts an activation; the approved call's spans join its trace.
      const traceContext = await emitActivationRoot(context, environment, { turnId: record.turnId });
      const approved = !context.timerFired("deadline") && resolution?.message.approved === true;
      const rejectionMessage = context.timerFired("deadline") ? approvalDeadlinePassed : (resolution?.message.rejectionMessage ?? null);
      await events.write("interrupt_resolved", {
        interrupt_id: interruptId, kind: "approval", approved, answered: false,
        rejection_message: approved ? null : rejectionMessage, cancellation_reason: null,
      });
      if (approved) {
        context.write(persistence.agentToolCalls.instance(toolCallId), withTraceContext({ ...record, status: "approved" }, traceContext));
        return moveTo(toolStepFor(record.effect), toolCallId, toolStepMovementOptions(environment, toolCallId));
      }
      await finishToolCall(context, persistence, record, "rejected", { output: rejectedToolResult(rejectionMessage), error: rejectionMessage }, events);
      return deadEnd();
    },
  });
}

async function runToolCall(context: ExecuteContext, environment: SessionEnvironment, toolCallId: string): Promise<StepDecision> {
  const { persistence, runner } = environment;
  const record = readToolCall(context, persistence, toolCallId);
  const events = createEventWriter(context, persistence, record.turnId);
  if (isFinalToolCallStatus(record.status)) return deadEnd();
  // Steering or cancel_turn stops a call that has not started; a later attempt may follow a start, so it runs on.
  const control = context.attempt === 1 && context.heartbeatCheckpoint === undefined ? turnControlOf(context, environment, record.turnId) : null;
  if (control !== null) {
    await recordCancelledCall(context, environment, record, control, events);
    return deadEnd();
  }
  // Output and a heartbeat before the tool runs: a crash after this point is a failed attempt, never a "not started" one.
  await events.write("tool_call_started", { tool_call_id: toolCallId, tool_name: record.toolName });
  await context.heartbeat();
  const toolCall: AgentToolCall = { ...record, status: "approved", startedAt: record.startedAt ?? isoNow(context) };
  const execution: DeferredToolExecution = {
    flowId: context.flowId,
    toolCall,
    idempotencyKey: `${context.flowId}/${record.turnId}/${toolCallId}`,
    attempt: context.attempt,
    events,
    cancellationSignal: context.cancellationSignal,
    deadline: context.deadline,
    heartbeat: () => context.heartbeat(),
    heartbeatCheckpoint: context.heartbeatCheckpoint,
    saveHeartbeatCheckpoint: (text) => context.heartbeat(text),
    inputAnswers: record.inputAnswers ?? [],
    supportsToolTasks: runner.pollToolTask !== undefined,
  };
  let result: unknown;
  try {
    // The one tool-execution scope: whatever framework runs the tool, it reads this call through currentToolExecution().
    result = await withToolSpan(context, environment, toolCall, () =>
      withBackgroundHeartbeat(context, () => runInToolExecution(execution, () => runner.executeDeferredToolCall(execution))));
  } catch (error) {
    if (!ToolExecutionError.isInstance(error)) throw error;
    durableBoundary("agent.tool.before-record", context.flowId, record.toolName);
    await finishToolCall(context, persistence, toolCall, "failed", { output: failedToolResult(error.message), error: error.message }, events);
    return deadEnd();
  }
  // The side effect happened; its record commits with this Step.
  durableBoundary("agent.tool.before-record", context.flowId, record.toolName);
  if ((result as { kind?: unknown } | null)?.kind === "tool_input_requested") {
    return recordToolQuestion(context, environment, toolCall, result, events);
  }
  if ((result as { kind?: unknown } | null)?.kind === "tool_task_started") {
    return recordToolTaskStarted(context, environment, toolCall, result, events);
  }
  const output = (result as { output?: unknown } | null)?.output;
  if (typeof output !== "string") {
    throw new TerminalError(`executeDeferredToolCall for ${record.toolName} returned ${JSON.stringify(result)?.slice(0, 200)}; return { output: string }, a ToolInputRequested or a ToolTaskStarted`);
  }
  await finishToolCall(context, persistence, toolCall, "succeeded", { output, error: null }, events);
  return deadEnd();
}

/** `CallTool`: a `read` or `idempotent_write` call, 3 attempts, then `RecordToolFailure`. */
export function createCallToolStep(environment: SessionEnvironment): StepDefinition<unknown> {
  return defineStep<unknown>(AgentStepType.CallTool, {
    load: (input) => toolCallLoads(environment, parseToolCallId(input)),
    failureRoute: AgentStepType.RecordToolFailure,
    executeOptions: { heartbeatTimeoutMs: 2 * 60_000, timeoutMs: 15 * 60_000, retry: { maximumAttempts: 3 } },
    execute: (context, input) => runToolCall(context, environment, parseToolCallId(input)),
  });
}

/** `CallSingleAttemptTool`: a `non_idempotent_write` or `unclassified` call, one attempt, then `RecordToolOutcomeUnknown`. */
export function createCallSingleAttemptToolStep(environment: SessionEnvironment): StepDefinition<unknown> {
  return defineStep<unknown>(AgentStepType.CallSingleAttemptTool, {
    load: (input) => toolCallLoads(environment, parseToolCallId(input)),
    failureRoute: AgentStepType.RecordToolOutcomeUnknown,
    executeOptions: { heartbeatTimeoutMs: 2 * 60_000, timeoutMs: 15 * 60_000, retry: { maximumAttempts: 1 } },
    execute: (context, input) => runToolCall(context, environment, parseToolCallId(input)),
  });
}

/**
 * Reasons an attempt ended without the tool's answer, so the tool may have
 * been stopped mid-run: the engine's own (a closing Worker's release among
 * them), and an MCP call whose connection broke after it was sent.
 */
const interruptionErrorTypes: ReadonlySet<string> = new Set(["StepTimeout", "HeartbeatTimeout", "WorkerLost", "CommitLost", "RetryWindowClosed", "WorkerReleased", "McpToolCallInterruptedError"]);

/**
 * The result text of a write whose outcome is unknown: the tool's own error
 * when it threw one, else the contract's interruption text.
 */
function outcomeUnknownResultOf(recovery: ExecuteContext["recoveryError"]): string {
  if (recovery === undefined || interruptionErrorTypes.has(recovery.type)) return outcomeUnknownToolResult;
  return outcomeUnknownAfterToolErrorResult(recovery.message);
}

/** Records a call whose tool Step failed for good, by what is known about whether it ran. */
async function recordFailedCall(context: ExecuteContext, environment: SessionEnvironment, toolCallId: string, writeIsUnknown: (record: AgentToolCallRecord) => boolean): Promise<StepDecision> {
  const { persistence } = environment;
  const record = readToolCallIfStored(context, persistence, toolCallId);
  if (record === undefined || isFinalToolCallStatus(record.status)) return deadEnd();
  const events = createEventWriter(context, persistence, record.turnId);
  const recovery = context.recoveryError;
  const detail = recovery === undefined ? "the tool Step failed" : `${recovery.type}: ${recovery.message}`;
  // A call whose tool already asked a question ran before, so it keeps the status of its effect.
  // A task's abandonment that kept failing keeps its reason.
  if (record.taskId !== undefined && isTurnCancelled(context, environment, record.turnId)) {
    await finishToolCall(context, persistence, { ...record, cancellationReason: "turn_cancelled" }, "outcome_unknown", { output: outcomeUnknownToolResult, error: detail }, events);
    return deadEnd();
  }
  if (recovery?.attemptProgress === "NOT_STARTED" && (record.inputAnswers?.length ?? 0) === 0 && record.taskId === undefined) {
    const error = `${toolCallNotRunErrorPrefix}: ${detail}`;
    await finishToolCall(context, persistence, record, "failed", { output: error, error }, events);
  } else if (writeIsUnknown(record)) {
    await finishToolCall(context, persistence, record, "outcome_unknown", { output: outcomeUnknownResultOf(recovery), error: detail }, events);
  } else {
    await finishToolCall(context, persistence, record, "failed", { output: failedToolResult(detail), error: detail }, events);
  }
  return deadEnd();
}

/** `RecordToolFailure`: `failed` for a read, `outcome_unknown` for a write. */
export function createRecordToolFailureStep(environment: SessionEnvironment): StepDefinition<unknown> {
  return defineStep<unknown>(AgentStepType.RecordToolFailure, {
    load: (input) => [environment.persistence.agentToolCalls.instance(parseToolCallId(input))],
    executeOptions: { retry: recordRetry },
    execute: (context, input) => recordFailedCall(context, environment, parseToolCallId(input), (record) => record.effect !== "read"),
  });
}

/** `RecordToolOutcomeUnknown`: `outcome_unknown`, unless the tool never started. */
export function createRecordToolOutcomeUnknownStep(environment: SessionEnvironment): StepDefinition<unknown> {
  return defineStep<unknown>(AgentStepType.RecordToolOutcomeUnknown, {
    load: (input) => [environment.persistence.agentToolCalls.instance(parseToolCallId(input))],
    executeOptions: { retry: recordRetry },
    execute: (context, input) => recordFailedCall(context, environment, parseToolCallId(input), () => true),
  });
}
