/**
 * `PollToolTask`: follows a task a tool started (`ToolTaskStarted`). It
 * waits on a Timer for `taskPollIntervalSeconds` (a zero Timer while a
 * question's resolution waits to be handed over), calls `pollToolTask` once,
 * and records the result, polls again, or records the task's question. It
 * takes no lock; `cancel_turn` cancels it and drops what it returns.
 */
import { anyOf, deadEnd, defineStep, moveTo, TerminalError, timer, type ExecuteContext, type StepDecision, type StepDefinition } from "@perdure/engine";
import type { ToolTaskPoll } from "../../contract/agent-framework-runner.ts";
import { ToolExecutionError } from "../../contract/tool-execution-error.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import { failedToolResult } from "../../contract/values/result-texts.ts";
import { isRetryableEffect } from "../../contract/values/tool-effect.ts";
import { withoutFields } from "../../contract/values/wire.ts";
import { createEventWriter, withBackgroundHeartbeat } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, readToolCallIfStored } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { recordToolQuestion } from "./record-tool-question.ts";
import { parseToolCallId } from "./tool-step-input.ts";
import { isTurnCancelled } from "./turn-control-checks.ts";
import { withToolSpan } from "../../tracing/tool-span.ts";
import { agentUsageFromWire, agentUsageToWire, type AgentUsage } from "../../contract/values/agent-usage.ts";
import { recordUsage } from "./run-model.ts";

const timerIdCharacters = /[^A-Za-z0-9_.:-]/g;

/**
 * The Timer ID of a task's next poll, `tool_task_poll:<toolCallId>`, which
 * `client.skipTimer` names to poll at once.
 *
 * @example
 * await client.skipTimer(sessionId, toolTaskPollTimerId("call-1"));
 */
export function toolTaskPollTimerId(toolCallId: string): string {
  return `tool_task_poll:${toolCallId}`.replace(timerIdCharacters, "_").slice(0, 128);
}

/** Rounds a poll interval up to whole seconds, from 1 to one day; refuses anything that is not a number. */
export function normalizePollIntervalSeconds(value: unknown, what: string): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TerminalError(`${what} returned pollIntervalSeconds ${JSON.stringify(value)}; use a number of seconds from 1 to 86400`);
  }
  return Math.min(86_400, Math.max(1, Math.ceil(value)));
}

/** How a `PollToolTask` movement continues the call: its failure route follows the call's effect. */
export function pollToolTaskMovementOptions(record: Pick<AgentToolCallRecord, "effect">): { failureRoute: string } {
  return { failureRoute: isRetryableEffect(record.effect) ? AgentStepType.RecordToolFailure : AgentStepType.RecordToolOutcomeUnknown };
}

async function poll(context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord): Promise<StepDecision> {
  const { persistence, runner } = environment;
  const events = createEventWriter(context, persistence, record.turnId);
  if (runner.pollToolTask === undefined) throw new TerminalError(`session ${context.flowId} polls task ${record.taskId ?? ""}, but its runner has no pollToolTask method`);
  const request: ToolTaskPoll = {
    flowId: context.flowId,
    toolCall: record,
    idempotencyKey: `${context.flowId}/${record.turnId}/${record.toolCallId}`,
    attempt: context.attempt,
    pendingAnswer: record.taskAnswerPending === true ? (record.inputAnswers?.at(-1) ?? null) : null,
    events,
    cancellationSignal: context.cancellationSignal,
    deadline: context.deadline,
    heartbeat: () => context.heartbeat(),
  };
  let outcome: unknown;
  try {
    outcome = await withToolSpan(context, environment, record, () => withBackgroundHeartbeat(context, () => (runner.pollToolTask as NonNullable<typeof runner.pollToolTask>)(request)));
  } catch (error) {
    if (!ToolExecutionError.isInstance(error) || context.cancellationSignal.aborted) throw error;
    await finishToolCall(context, persistence, record, "failed", { output: failedToolResult(error.message), error: error.message }, events);
    return deadEnd();
  }
  // cancel_turn cancelled this poll: its commit would be dropped, so it writes no events either.
  if (context.cancellationSignal.aborted) throw new Error(`the poll of task ${record.taskId ?? ""} was cancelled; its result is dropped`);
  const kind = (outcome as { kind?: unknown } | null)?.kind;
  const settled = withoutFields(record, ["taskAnswerPending"]);
  if (kind === "tool_task_pending") {
    const pending = outcome as { pollIntervalSeconds?: unknown; continuation?: unknown };
    const continuation = typeof pending.continuation === "string" ? pending.continuation : null;
    const next: AgentToolCallRecord = {
      ...withoutFields(settled, ["inputContinuation"]),
      taskPollIntervalSeconds: normalizePollIntervalSeconds(pending.pollIntervalSeconds, "pollToolTask"),
      ...(continuation === null ? {} : { inputContinuation: continuation }),
    };
    context.write(persistence.agentToolCalls.instance(record.toolCallId), next);
    return moveTo(AgentStepType.PollToolTask, record.toolCallId, pollToolTaskMovementOptions(record));
  }
  if (kind === "tool_input_requested") {
    return recordToolQuestion(context, environment, { ...settled, status: "approved" }, outcome, events);
  }
  const output = (outcome as { output?: unknown } | null)?.output;
  if (typeof output !== "string") {
    throw new TerminalError(`pollToolTask for ${record.toolName} returned ${JSON.stringify(outcome)?.slice(0, 200)}; return { output: string }, a ToolInputRequested or a ToolTaskPending`);
  }
  // Usage spent elsewhere for this result (a sub-agent session's) rolls up into the session's.
  const usage = (outcome as { usage?: unknown }).usage;
  if (typeof usage === "object" && usage !== null) await recordUsage(context, environment, agentUsageFromWire(agentUsageToWire(usage as AgentUsage)), events);
  await finishToolCall(context, persistence, settled, "succeeded", { output, error: null }, events);
  return deadEnd();
}

export function createPollToolTaskStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.PollToolTask, {
    load: (input) => [persistence.agentToolCalls.instance(parseToolCallId(input))],
    failureRoute: AgentStepType.RecordToolFailure,
    // AgentUsage is locked because a result may carry usage to add (a sub-agent's), and the polls of parallel calls commit apart.
    executeOptions: { heartbeatTimeoutMs: 2 * 60_000, timeoutMs: 15 * 60_000, retry: { maximumAttempts: 3 }, locks: [persistence.agentUsage] },
    waitUntil: (context, input) => {
      const record = readToolCallIfStored(context, persistence, parseToolCallId(input));
      if (record === undefined) return anyOf(timer("gone", { afterMs: 0 }));
      const now = record.taskAnswerPending === true || isFinalToolCallStatus(record.status) || isTurnCancelled(context, environment, record.turnId);
      return anyOf(timer(toolTaskPollTimerId(record.toolCallId), { afterMs: now ? 0 : (record.taskPollIntervalSeconds ?? 1) * 1000 }));
    },
    execute: async (context, input) => {
      const record = readToolCallIfStored(context, persistence, parseToolCallId(input));
      if (record?.status !== "waiting_for_task") return deadEnd();
      // cancel_turn abandons the task; Stop never waits for it.
      if (isTurnCancelled(context, environment, record.turnId)) return moveTo(AgentStepType.CancelToolTask, record.toolCallId);
      return poll(context, environment, record);
    },
  });
}
