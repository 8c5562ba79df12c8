/**
 * `AwaitUserMessage`: waits for one queued message or, while the plan is
 * `draft` or `active`, for the approval of its current revision, and starts
 * the next turn: `chat` or `planning` for a message, `executing` for an
 * approved plan.
 */
import { anyOf, deadEnd, defineStep, moveTo, received, type ExecuteContext, type LoadSelection, type PlainAttributeReader, type StepDecision, type StepDefinition } from "@perdure/engine";
import type { AgentSessionPersistence } from "../persistence.ts";
import { copyMessageIndex, windowMessageCount } from "../messages/message-index-view.ts";
import { messageStorageOptionsOf } from "../messages/message-storage-registry.ts";
import { planExecutionKey, type AgentPlan } from "../../contract/values/agent-plan.ts";
import type { InteractionMode } from "../../contract/values/agent-state.ts";
import type { AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import { planExecutionUserMessage } from "../../contract/values/result-texts.ts";
import { createEventWriter } from "../event-writer.ts";
import { activatePlan } from "../plans/plan-writes.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { readState, startTurn } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";
import { emitActivationRoot } from "../../tracing/activation-root.ts";

function isExecutable(plan: AgentPlan | undefined): plan is AgentPlan {
  return plan !== undefined && (plan.status === "draft" || plan.status === "active");
}

/** A message with `planMode`, or any message while a draft exists, plans; anything else chats. */
export function interactionModeForMessages(messages: readonly AgentUserMessage[], plan: AgentPlan | undefined): InteractionMode {
  return messages.some((message) => message.planMode === true) || plan?.status === "draft" ? "planning" : "chat";
}

async function startMessageTurn(context: ExecuteContext, environment: SessionEnvironment, message: AgentUserMessage): Promise<StepDecision> {
  const { persistence, runner } = environment;
  const mode = interactionModeForMessages([message], context.read(persistence.agentPlan));
  const state = await startTurn(context, persistence, readState(context, persistence), runner.buildUserMessage(message.text), (turnId) =>
    createEventWriter(context, persistence, turnId), mode, [message.clientMessageId]);
  await emitActivationRoot(context, environment, { turnId: state.activeTurnId, lastMessageSequence: state.messageCount });
  context.write(persistence.agentState, state);
  return moveToModelInputStep(context, environment, AgentStepType.RunModel);
}

async function startExecutingTurn(context: ExecuteContext, environment: SessionEnvironment, revision: number): Promise<StepDecision> {
  const { persistence, runner } = environment;
  context.write(persistence.pendingPlanExecution, null);
  const plan = context.read(persistence.agentPlan);
  // An approval of a revision that a later turn replaced never runs.
  if (!isExecutable(plan) || plan.revision !== revision) return moveTo(AgentStepType.AwaitUserMessage);
  let turnEvents = createEventWriter(context, persistence, null);
  const state = await startTurn(context, persistence, readState(context, persistence), runner.buildUserMessage(planExecutionUserMessage(revision)), (turnId) => {
    turnEvents = createEventWriter(context, persistence, turnId);
    return turnEvents;
  }, "executing");
  await activatePlan(context, persistence, plan, turnEvents);
  await turnEvents.write("plan_execution_started", { revision });
  await emitActivationRoot(context, environment, { turnId: state.activeTurnId, lastMessageSequence: state.messageCount });
  context.write(persistence.agentState, state);
  return moveToModelInputStep(context, environment, AgentStepType.RunModel);
}

/**
 * What `AwaitUserMessage.execute` loads, decided from plain Attributes: the
 * whole window when the message it stores may roll the window over (a
 * rollover reads the oldest messages it moves into a chunk), else nothing.
 * It stores one message (a user message, or an approved plan's start); the
 * window rolls over once it holds more than `messageWindowSize`, so it loads
 * from `messageWindowSize - 1` messages on: one message of margin. A window
 * over its size (a rollover bounded per commit) loads too.
 */
export function awaitUserMessageLoads(persistence: AgentSessionPersistence): (input: unknown, attributes: PlainAttributeReader) => readonly LoadSelection[] {
  const { messageWindowSize } = messageStorageOptionsOf(persistence);
  return (_input, attributes) => {
    const state = attributes.read(persistence.agentState);
    if (state === undefined) return [persistence.agentMessages.all()];
    const windowCount = windowMessageCount(attributes.read(persistence.agentMessageIndex) ?? copyMessageIndex(undefined), state.messageCount);
    return windowCount + 2 > messageWindowSize ? [persistence.agentMessages.all()] : [];
  };
}

export function createAwaitUserMessageStep(environment: SessionEnvironment): StepDefinition<unknown> {
  const { persistence } = environment;
  return defineStep(AgentStepType.AwaitUserMessage, {
    // A Step that stores messages loads the whole window when a rollover may move its oldest.
    load: awaitUserMessageLoads(persistence),
    // The wait reads only the plan, a plain Attribute.
    waitUntilLoad: [],
    // Queued messages come first; only the current revision's approval can start a turn.
    waitUntil: (context) => {
      const plan = context.read(persistence.agentPlan);
      const control = received(persistence.turnControlRequests, { atLeast: 1 });
      const queued = received(persistence.queuedUserMessages);
      return isExecutable(plan) ? anyOf(control, queued, received(persistence.planExecutions.instance(planExecutionKey(plan.revision)))) : anyOf(control, queued);
    },
    executeOptions: { locks: [persistence.pendingPlanExecution, persistence.turnCancellationRequest] },
    execute: async (context) => {
      // A steer that arrived as the turn ended: ApplyTurnControl starts a turn with the steered messages.
      if (context.consumed(persistence.turnControlRequests).length > 0) return moveToModelInputStep(context, environment, AgentStepType.ApplyTurnControl, null);
      const [queued] = context.consumed(persistence.queuedUserMessages);
      if (queued !== undefined) return startMessageTurn(context, environment, queued.message);
      const plan = context.read(persistence.agentPlan);
      if (plan !== undefined) {
        const [approval] = context.consumed(persistence.planExecutions.instance(planExecutionKey(plan.revision)));
        if (approval !== undefined) return startExecutingTurn(context, environment, approval.message.revision);
      }
      return deadEnd();
    },
  });
}
