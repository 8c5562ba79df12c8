import { anyOf, deadEnd, defineStep, moveTo, received, type ExecuteContext, type StepDefinition } from "@perdure/engine";
import { afterTurnEnded } from "./after-turn-ended.ts";
import { recordRetry } from "./tool-step-input.ts";
import { turnControlOf } from "./turn-control-checks.ts";
import type { FrameworkMessage } from "../../contract/values/agent-message.ts";
import { turnFailureNoteFooter, turnFailureNoteHeader } from "../../contract/values/result-texts.ts";
import { buildTurnContext, loadedToolCalls } from "../build-turn-context.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { appendMessages, clearTurnRecords, readState } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";

/**
 * A steer wake: drops the pending interrupts of the turn's approvals and of
 * questions no task asked, and wakes each such approval, question and
 * durable wait through `ToolCallCancellations`. Started calls and tasks run on.
 */
function wakeWaitsForSteer(context: ExecuteContext, environment: SessionEnvironment, turnId: string): void {
  const { persistence } = environment;
  const woken = new Set<string>();
  for (const record of loadedToolCalls(context, environment)) {
    const waits = record.status === "awaiting_approval" || record.status === "waiting_for_timer" || (record.status === "awaiting_answer" && record.taskId === undefined);
    if (!waits || record.turnId !== turnId) continue;
    woken.add(record.toolCallId);
    context.publish(persistence.toolCallCancellations.instance(record.toolCallId), { reason: "steered" });
  }
  const pending = context.read(persistence.pendingInterrupts) ?? [];
  const kept = pending.filter((interrupt) => !woken.has(interrupt.toolCallId));
  if (kept.length !== pending.length) context.write(persistence.pendingInterrupts, kept);
}

/**
 * `ResumeTurn`: waits until every tool call of the response is final, then
 * runs the model again, or ends a steered or cancelled turn in
 * `ApplyTurnControl`. A steer wakes it first, to stop the turn's waits.
 */
export function createResumeTurnStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.ResumeTurn, {
    load: [persistence.agentToolCalls.all(), persistence.steeredUserMessages],
    // The wait reads nothing: its conditions come from the input.
    waitUntilLoad: [],
    waitUntil: (_context, expected) => anyOf(
      received(persistence.toolCallResults, { exactly: typeof expected === "number" && expected > 0 ? expected : 1 }),
      received(persistence.turnControlRequests, { atLeast: 1 }),
    ),
    executeOptions: { locks: [persistence.pendingInterrupts], retry: recordRetry },
    execute: (context, expected) => {
      const state = readState(context, persistence);
      const turnId = state.activeTurnId;
      if (turnId === null) return deadEnd();
      if (context.consumed(persistence.toolCallResults).length === 0) {
        if (turnControlOf(context, environment, turnId) === "steered") wakeWaitsForSteer(context, environment, turnId);
        return moveTo(AgentStepType.ResumeTurn, expected);
      }
      context.write(persistence.agentState, { ...state, status: "running_model" });
      return turnControlOf(context, environment, turnId) === null
        ? moveToModelInputStep(context, environment, AgentStepType.RunModel)
        : moveToModelInputStep(context, environment, AgentStepType.ApplyTurnControl, turnId);
    },
  });
}

/** `RecordTurnFailure`: ends a turn whose model call failed for good, keeping what its tools did. */
export function createRecordTurnFailureStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, runner } = environment;
  return defineStep<unknown>(AgentStepType.RecordTurnFailure, {
    // A failure route has static options: it loads every kept chunk when the runner rebuilds the unfinished turn from the messages.
    load: runner.buildUnfinishedTurnMessages === undefined
      ? [persistence.agentMessages.all(), persistence.agentToolCalls.all()]
      : [persistence.agentMessages.all(), persistence.agentMessageChunks.all(), persistence.agentToolCalls.all()],
    executeOptions: { retry: recordRetry },
    execute: async (context) => {
      const state = readState(context, persistence);
      const turnId = state.activeTurnId;
      if (turnId === null) return moveTo(AgentStepType.AwaitUserMessage);
      const recovery = context.recoveryError;
      const error = recovery === undefined ? "the turn failed" : `${recovery.type}: ${recovery.message}`;
      const turn = buildTurnContext(context, environment, state, turnId);
      const messages: FrameworkMessage[] = [];
      if (runner.buildUnfinishedTurnMessages !== undefined) {
        try {
          messages.push(...runner.buildUnfinishedTurnMessages(turn));
        } catch (thrown) {
          console.warn(`perdure agents: buildUnfinishedTurnMessages of ${context.flowId} ${turnId} failed; storing only the note:`, thrown);
        }
      }
      const finalCalls = loadedToolCalls(context, environment).filter((record) => isFinalToolCallStatus(record.status));
      if (finalCalls.length > 0) {
        const lines = finalCalls.map((call) => `- ${call.toolName} (${call.toolCallId}): ${call.status}${call.output === null ? "" : `: ${call.output}`}`);
        const note = [turnFailureNoteHeader, ...lines, turnFailureNoteFooter].join("\n");
        messages.push({ ...runner.buildUserMessage(note), role: "system", text: note });
      }
      const appended = appendMessages(context, persistence, state, messages, turnId);
      clearTurnRecords(context, persistence);
      const pending = context.read(persistence.pendingInterrupts) ?? [];
      context.write(persistence.pendingInterrupts, pending.filter((interrupt) => interrupt.turnId !== turnId));
      context.write(persistence.agentState, { ...appended, status: "waiting_for_user_message", activeTurnId: null, lastTurnError: error });
      await turn.events.write("turn_failed", { error });
      return afterTurnEnded(context, environment);
    },
  });
}
