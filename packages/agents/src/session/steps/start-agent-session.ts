import { defineStep, failFlow, moveTo, type StepDefinition } from "@perdure/engine";
import { agentSessionStartInputFromWire } from "../../contract/values/agent-state.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import { isBlankText } from "../../contract/values/result-texts.ts";
import { createEventWriter } from "../event-writer.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isoNow, startTurn } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";
import { invalidStartSessionSettingsReason, sessionSettingsRefusal } from "../settings/session-settings-limits.ts";
import { emitActivationRoot } from "../../tracing/activation-root.ts";

/** `StartAgentSession`: initializes the session and starts a turn when the input carries a message. */
export function createStartAgentSessionStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence, runner } = environment;
  return defineStep<unknown>(AgentStepType.StartAgentSession, {
    // A Step that stores messages loads the whole window, so a rollover can move its oldest.
    load: [persistence.agentMessages.all()],
    execute: async (context, rawInput) => {
      const input = agentSessionStartInputFromWire(rawInput);
      if (input.sessionSettings !== undefined && input.sessionSettings !== null) {
        // Invalid settings would fail every attempt the same way: fail at once, with no retry.
        const refusal = sessionSettingsRefusal(input.sessionSettings);
        if (refusal !== null) return failFlow(`${invalidStartSessionSettingsReason}: ${refusal}`);
        if (context.read(persistence.agentState) === undefined) context.write(persistence.sessionSettings, input.sessionSettings);
      }
      const now = isoNow(context);
      let state = context.read(persistence.agentState) ?? {
        status: "waiting_for_user_message" as const,
        activeTurnId: null,
        turnCount: 0,
        messageCount: 0,
        lastTurnError: null,
        createdAt: now,
        updatedAt: now,
      };
      if (context.read(persistence.agentUsage) === undefined) context.write(persistence.agentUsage, emptyAgentUsage());
      if (context.read(persistence.pendingInterrupts) === undefined) context.write(persistence.pendingInterrupts, []);
      // A blank first message starts no turn, as a blank send_user_message would be refused.
      if (input.initialMessage === undefined || input.initialMessage === null || isBlankText(input.initialMessage)) {
        context.write(persistence.agentState, state);
        return moveTo(AgentStepType.AwaitUserMessage);
      }
      state = await startTurn(context, persistence, state, runner.buildUserMessage(input.initialMessage), (turnId) =>
        createEventWriter(context, persistence, turnId));
      await emitActivationRoot(context, environment, { turnId: state.activeTurnId, lastMessageSequence: state.messageCount });
      context.write(persistence.agentState, state);
      return moveToModelInputStep(context, environment, AgentStepType.RunModel);
    },
  });
}

