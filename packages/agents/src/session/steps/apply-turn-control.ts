/**
 * `ApplyTurnControl`: consumes every steered message and stale wake, ends the
 * active steered or cancelled turn (its unfinished-turn messages or a note,
 * then `turn_steered` or `turn_cancelled`), and starts a turn with the
 * steered messages, in order. Its input is the turn it ends, or null when
 * `AwaitUserMessage` woke for a steer while no turn was active.
 */
import { allOf, deadEnd, defineStep, received, type ExecuteContext, type StepDecision, type StepDefinition } from "@perdure/engine";
import type { FrameworkMessage } from "../../contract/values/agent-message.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { isFinalToolCallStatus } from "../../contract/values/agent-tool-call.ts";
import type { AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import { endedTurnNoteCallsIntro, turnCancelledNoteHeader, turnFailureNoteFooter, turnSteeredNoteHeader } from "../../contract/values/result-texts.ts";
import { buildTurnContext, loadedToolCalls } from "../build-turn-context.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { appendMessages, clearTurnRecords, readState, startTurn, turnMessageCount } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";
import { interactionModeForMessages } from "./await-user-message.ts";
import { afterTurnEnded } from "./after-turn-ended.ts";
import { recordRetry } from "./tool-step-input.ts";
import { emitActivationRoot } from "../../tracing/activation-root.ts";

function parseTurnId(input: unknown): string | null {
  return typeof input === "string" && input !== "" ? input : null;
}

/** A note message, stored as `system` in the runner's own user-message form. */
function noteMessage(environment: SessionEnvironment, note: string): FrameworkMessage {
  return { ...environment.runner.buildUserMessage(note), role: "system", text: note };
}

/**
 * The runner's exact transcript of the turn, or the note that lists the calls
 * that ran. A cancelled turn's transcript is followed by the note's header,
 * so the next model call sees that the user stopped the turn (see the ADR on
 * cancelled turns): cancelled during its first model call, a turn's
 * transcript is empty, and the model would see the cancelled request just
 * before the next one.
 */
function endedTurnMessages(context: ExecuteContext, environment: SessionEnvironment, state: AgentState, turnId: string, cancelled: boolean): FrameworkMessage[] {
  const { runner } = environment;
  if (runner.buildUnfinishedTurnMessages !== undefined) {
    try {
      const transcript = runner.buildUnfinishedTurnMessages(buildTurnContext(context, environment, state, turnId));
      return cancelled ? [...transcript, noteMessage(environment, turnCancelledNoteHeader)] : transcript;
    } catch (thrown) {
      console.warn(`perdure agents: buildUnfinishedTurnMessages of ${context.flowId} ${turnId} failed; storing the note instead:`, thrown);
    }
  }
  const calls = loadedToolCalls(context, environment).filter((record) => isFinalToolCallStatus(record.status));
  const lines = calls.map((call) => `- ${call.toolName} (${call.toolCallId}): ${call.status}${call.output === null ? "" : `: ${call.output}`}`);
  const header = cancelled ? turnCancelledNoteHeader : turnSteeredNoteHeader;
  const note = calls.length === 0 ? header : [header, endedTurnNoteCallsIntro, ...lines, turnFailureNoteFooter].join("\n");
  return [noteMessage(environment, note)];
}

/** Ends the active turn and writes `turn_steered` or `turn_cancelled`; returns the new state (not yet written). */
async function endTurn(context: ExecuteContext, environment: SessionEnvironment, state: AgentState, turnId: string, steeredCount: number): Promise<AgentState> {
  const { persistence } = environment;
  const cancelled = context.read(persistence.turnCancellationRequest)?.turnId === turnId;
  const appended = appendMessages(context, persistence, state, endedTurnMessages(context, environment, state, turnId, cancelled), turnId);
  const messageCount = turnMessageCount(context, persistence, appended, turnId);
  clearTurnRecords(context, persistence);
  const pending = context.read(persistence.pendingInterrupts) ?? [];
  if (pending.some((interrupt) => interrupt.turnId === turnId)) context.write(persistence.pendingInterrupts, pending.filter((interrupt) => interrupt.turnId !== turnId));
  const events = createEventWriter(context, persistence, turnId);
  if (cancelled) await events.write("turn_cancelled", { message_count: messageCount });
  else await events.write("turn_steered", { steered_message_count: steeredCount, message_count: messageCount });
  return { ...appended, status: "waiting_for_user_message", activeTurnId: null };
}

async function startSteeredTurn(context: ExecuteContext, environment: SessionEnvironment, state: AgentState, messages: readonly AgentUserMessage[]): Promise<StepDecision> {
  const { persistence, runner } = environment;
  const mode = interactionModeForMessages(messages, context.read(persistence.agentPlan));
  const started = await startTurn(context, persistence, state, messages.map((message) => runner.buildUserMessage(message.text)), (turnId) =>
    createEventWriter(context, persistence, turnId), mode, messages.map((message) => message.clientMessageId), "steer");
  await emitActivationRoot(context, environment, { turnId: started.activeTurnId, lastMessageSequence: started.messageCount });
  context.write(persistence.agentState, started);
  return moveToModelInputStep(context, environment, AgentStepType.RunModel);
}

export function createApplyTurnControlStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.ApplyTurnControl, {
    load: [persistence.agentMessages.all(), persistence.agentToolCalls.all()],
    executeOptions: { retry: recordRetry },
    // Ready at once; takes every steered message and every wake queued at that moment.
    waitUntil: () => allOf(received(persistence.steeredUserMessages, { atLeast: 0 }), received(persistence.turnControlRequests, { atLeast: 0 })),
    execute: async (context, input) => {
      const turnId = parseTurnId(input);
      const steered = context.consumed(persistence.steeredUserMessages).map((entry) => entry.message);
      let state = readState(context, persistence);
      if (turnId !== null && state.activeTurnId !== turnId) {
        // Another ApplyTurnControl ended this turn first; hand on what this one took.
        for (const message of steered) context.publish(persistence.steeredUserMessages, message);
        if (steered.length > 0) context.publish(persistence.turnControlRequests, { kind: "steer" });
        return deadEnd();
      }
      if (state.activeTurnId !== null) {
        state = await endTurn(context, environment, state, state.activeTurnId, steered.length);
      }
      if (steered.length > 0) return startSteeredTurn(context, environment, state, steered);
      context.write(persistence.agentState, state);
      return afterTurnEnded(context, environment);
    },
  });
}
