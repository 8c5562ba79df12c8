/**
 * `AwaitQuestionAnswer`: waits for the answer to an `ask_user` question or to
 * a question a tool asked (`ToolInputRequested`). A tool's question is first
 * recorded by its tool Step, which holds no lock; this Step then raises it
 * under the `PendingInterrupts` lock (after a zero Timer) and waits again.
 */
import { anyOf, deadEnd, defineStep, moveTo, received, timer, type ExecuteContext, type StepDecision, type StepDefinition, type StepContext } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import { toolInputInterruptId, type AgentInterrupt, type AgentInterruptResolution } from "../../contract/values/agent-interrupt.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { withoutFields } from "../../contract/values/wire.ts";
import { failedToolResult, questionDeadlinePassed, questionDeclinedResult, toolQuestionIdClash } from "../../contract/values/result-texts.ts";
import { loadedToolCalls } from "../build-turn-context.ts";
import { questionLoad } from "../built-in-tools/question-load.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall, interruptDeadlineFromNow, isoNow, readToolCall } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { toolStepFor } from "./defer-tool-calls.ts";
import { interruptRaisedPayload, interruptResolvedPayload } from "./interrupt-events.ts";
import { parseToolCallId, recordRetry } from "./tool-step-input.ts";
import { pollToolTaskMovementOptions } from "./poll-tool-task.ts";
import { recordCancelledCall, resolveCancelledInterrupt, turnControlOf } from "./turn-control-checks.ts";
import { isFinalToolCallStatus, type QuestionAnswer } from "../../contract/values/agent-tool-call.ts";
import type { ToolCallCancellationReason } from "../../contract/values/turn-control.ts";

const raiseTimerId = "raise_question";
const deadlineTimerId = "deadline";

/** True for a call of the enabled `ask_user` built-in; its question's ID is the tool call ID. */
function isAskUserCall(environment: SessionEnvironment, record: AgentToolCallRecord): boolean {
  return record.toolName === "ask_user" && environment.options.builtInTools.includes("ask_user");
}

/** The interrupt ID of the call's current question. */
export function questionInterruptId(environment: SessionEnvironment, record: AgentToolCallRecord): string {
  return isAskUserCall(environment, record) ? record.toolCallId : toolInputInterruptId(record.toolCallId, (record.inputAnswers?.length ?? 0) + 1);
}

/** Queued resolutions of the question; every `AwaitQuestionAnswer` movement loads them (see `questionLoad`). */
function pendingResolutions(context: StepContext, environment: SessionEnvironment, interruptId: string): number {
  return context.pendingMessages(environment.persistence.interruptResolutions.instance(interruptId)).length;
}

/** Raises a tool's recorded question, unless its ID is another call's; then waits again. */
async function raiseToolQuestion(context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord, interruptId: string, events: AgentEventWriter): Promise<StepDecision> {
  const { persistence, options } = environment;
  // Steering stops a tool's question that is not raised yet, but never a task's; cancel_turn stops both.
  const control = turnControlOf(context, environment, record.turnId);
  if (control === "turn_cancelled" || (control === "steered" && record.taskId === undefined)) {
    return cancelQuestion(context, environment, record, null, control, events);
  }
  if (loadedToolCalls(context, environment).some((other) => other.toolCallId === interruptId)) {
    const error = toolQuestionIdClash(interruptId);
    await finishToolCall(context, persistence, record, "failed", { output: failedToolResult(error), error }, events);
    return deadEnd();
  }
  const interrupt: AgentInterrupt = {
    interruptId, kind: "question", toolCallId: record.toolCallId, toolName: record.toolName, arguments: record.arguments, turnId: record.turnId,
    deadline: interruptDeadlineFromNow(context, options.interruptDeadlineMs),
    createdAt: isoNow(context),
    question: record.inputQuestion ?? "",
    ...(record.inputChoices === undefined ? {} : { choices: record.inputChoices }),
    allowsFreeText: record.inputAllowsFreeText ?? record.inputChoices === undefined,
  };
  context.write(persistence.pendingInterrupts, [...(context.read(persistence.pendingInterrupts) ?? []), interrupt]);
  await events.write("interrupt_raised", interruptRaisedPayload(interrupt));
  return moveTo(AgentStepType.AwaitQuestionAnswer, record.toolCallId, { load: questionLoad(environment, interruptId) });
}

/** Ends a question's wait for steering or cancel_turn: a task is abandoned, any other call is recorded `rejected`. */
async function cancelQuestion(
  context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord, interruptId: string | null,
  reason: ToolCallCancellationReason, events: AgentEventWriter,
): Promise<StepDecision> {
  if (interruptId !== null) await resolveCancelledInterrupt(context, environment, { interruptId, kind: "question" }, reason, events);
  if (record.taskId !== undefined) return moveTo(AgentStepType.CancelToolTask, record.toolCallId);
  await recordCancelledCall(context, environment, record, reason, events);
  return deadEnd();
}

/** A task's question never ends the call: its resolution goes back to the task on the next poll, which runs at once. */
function returnToTask(context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord, answer: QuestionAnswer): StepDecision {
  const rest = withoutFields(record, ["inputQuestion", "inputChoices", "inputAllowsFreeText"]);
  const next: AgentToolCallRecord = { ...rest, status: "waiting_for_task", inputAnswers: [...(record.inputAnswers ?? []), answer], taskAnswerPending: true };
  context.write(environment.persistence.agentToolCalls.instance(record.toolCallId), next);
  return moveTo(AgentStepType.PollToolTask, record.toolCallId, pollToolTaskMovementOptions(record));
}

/** Records the answer: `ask_user`'s result, or back to `approved` and the tool Step with the answer for a tool. */
async function recordAnswer(context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord, interruptId: string, answer: string, events: AgentEventWriter): Promise<StepDecision> {
  const { persistence } = environment;
  await events.write("interrupt_resolved", interruptResolvedPayload({ interruptId, kind: "question" }, { approved: true, answered: true, rejectionMessage: null }));
  if (isAskUserCall(environment, record)) {
    await finishToolCall(context, persistence, record, "succeeded", { output: JSON.stringify({ status: "answered", answer }), error: null }, events);
    return deadEnd();
  }
  if (record.taskId !== undefined) return returnToTask(context, environment, record, { interruptId, resolution: "answered", answer });
  const rest = withoutFields(record, ["inputQuestion", "inputChoices", "inputAllowsFreeText"]);
  context.write(persistence.agentToolCalls.instance(record.toolCallId), {
    ...rest, status: "approved", inputAnswers: [...(record.inputAnswers ?? []), { interruptId, resolution: "answered", answer }],
  });
  return moveTo(toolStepFor(record.effect), record.toolCallId);
}

async function resolveQuestion(context: ExecuteContext, environment: SessionEnvironment, record: AgentToolCallRecord, interruptId: string, events: AgentEventWriter): Promise<StepDecision> {
  const { persistence } = environment;
  const pending = context.read(persistence.pendingInterrupts) ?? [];
  if (pending.some((interrupt) => interrupt.interruptId === interruptId)) {
    context.write(persistence.pendingInterrupts, pending.filter((interrupt) => interrupt.interruptId !== interruptId));
  }
  const resolution: AgentInterruptResolution | undefined = context.consumed(persistence.interruptResolutions.instance(interruptId))[0]?.message;
  const [cancelled] = context.consumed(persistence.toolCallCancellations.instance(record.toolCallId));
  if (cancelled !== undefined && resolution === undefined && !context.timerFired(deadlineTimerId)) {
    return cancelQuestion(context, environment, record, interruptId, cancelled.message.reason, events);
  }
  if (!context.timerFired(deadlineTimerId) && resolution?.approved === true && resolution.answer !== undefined) {
    return recordAnswer(context, environment, record, interruptId, resolution.answer, events);
  }
  const deadlinePassed = context.timerFired(deadlineTimerId) || resolution === undefined;
  const rejectionMessage = deadlinePassed ? questionDeadlinePassed : (resolution.rejectionMessage ?? null);
  await events.write("interrupt_resolved", interruptResolvedPayload({ interruptId, kind: "question" }, { approved: false, answered: false, rejectionMessage }));
  if (record.taskId !== undefined) {
    return returnToTask(context, environment, record, { interruptId, resolution: deadlinePassed ? "deadline_passed" : "declined", answer: null });
  }
  const output = rejectionMessage === null || rejectionMessage === "" ? questionDeclinedResult : rejectionMessage;
  await finishToolCall(context, persistence, record, "rejected", { output, error: output }, events);
  return deadEnd();
}

export function createAwaitQuestionAnswerStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.AwaitQuestionAnswer, {
    // Every record of the turn: a tool's question must not take another call's ID.
    load: [persistence.agentToolCalls.all(), persistence.steeredUserMessages],
    executeOptions: { locks: [persistence.pendingInterrupts], retry: recordRetry },
    waitUntil: (context, input) => {
      const record = readToolCall(context, persistence, parseToolCallId(input));
      const interruptId = questionInterruptId(environment, record);
      const interrupt = (context.read(persistence.pendingInterrupts) ?? []).find((pending) => pending.interruptId === interruptId);
      if (interrupt === undefined && !isAskUserCall(environment, record) && pendingResolutions(context, environment, interruptId) === 0) {
        return anyOf(timer(raiseTimerId, { afterMs: 0 }));
      }
      const cancellation = received(persistence.toolCallCancellations.instance(record.toolCallId));
      const resolution = received(persistence.interruptResolutions.instance(interruptId));
      return interrupt?.deadline === null || interrupt?.deadline === undefined
        ? anyOf(cancellation, resolution)
        : anyOf(cancellation, resolution, timer(deadlineTimerId, { at: Date.parse(interrupt.deadline) }));
    },
    execute: async (context, input) => {
      const record = readToolCall(context, persistence, parseToolCallId(input));
      const interruptId = questionInterruptId(environment, record);
      const events = createEventWriter(context, persistence, record.turnId);
      if (isFinalToolCallStatus(record.status)) return deadEnd();
      if (context.timerFired(raiseTimerId)) return raiseToolQuestion(context, environment, record, interruptId, events);
      return resolveQuestion(context, environment, record, interruptId, events);
    },
  });
}
