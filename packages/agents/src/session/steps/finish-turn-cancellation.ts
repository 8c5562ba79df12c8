/**
 * `FinishTurnCancellation`: the Step `cancel_turn` moves to. When the RPC
 * cancelled the model call (or the failure record of one), it ends the turn
 * in `ApplyTurnControl`. While tool calls run, the waits record themselves (the
 * RPC woke them through `ToolCallCancellations`); this Step hands each task
 * whose poll the RPC cancelled to `CancelToolTask` and ends, and
 * `ResumeTurn` ends the turn once every call is final.
 */
import { deadEnd, defineStep, movement, moveToMany, type StepDefinition } from "@perdure/engine";
import { loadedToolCalls } from "../build-turn-context.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { readState } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";
import { recordRetry } from "./tool-step-input.ts";

/** The input `cancel_turn` gives: the turn, and whether it cancelled the Step that drove it. A bare turn ID reads as no model call. */
function parseFinishInput(input: unknown): { turnId: string | null; modelCallCancelled: boolean } {
  if (typeof input === "string") return { turnId: input, modelCallCancelled: false };
  const object = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  return { turnId: typeof object.turn_id === "string" ? object.turn_id : null, modelCallCancelled: object.model_call_cancelled === true };
}

export function createFinishTurnCancellationStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep<unknown>(AgentStepType.FinishTurnCancellation, {
    load: [persistence.agentToolCalls.all()],
    executeOptions: { locks: [persistence.turnCancellationRequest, persistence.pendingInterrupts], retry: recordRetry },
    execute: (context, input) => {
      const state = readState(context, persistence);
      const { turnId, modelCallCancelled } = parseFinishInput(input);
      if (turnId === null || state.activeTurnId !== turnId) return deadEnd();
      // Exactly one Step drives a turn: when cancel_turn cancelled it, this Step takes over; otherwise ResumeTurn or ApplyTurnControl ends the turn.
      if (modelCallCancelled) return moveToModelInputStep(context, environment, AgentStepType.ApplyTurnControl, turnId);
      const abandoned = loadedToolCalls(context, environment).filter((record) => record.status === "waiting_for_task");
      // A poll started after cancel_turn committed is cancelled here too; it would hand its task over itself.
      return abandoned.length === 0
        ? deadEnd()
        : moveToMany(abandoned.map((record) => movement(AgentStepType.CancelToolTask, record.toolCallId)), { cancel: [AgentStepType.PollToolTask] });
    },
  });
}
