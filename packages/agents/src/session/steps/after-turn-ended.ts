/** Where a session goes when a turn ends: to wait for the next message and, in a sub-agent session, to wake its parent. */
import { moveTo, moveToMany, movement, type ExecuteContext, type StepDecision } from "@perdure/engine";
import type { SessionEnvironment } from "../session-environment.ts";
import { AgentStepType } from "../step-types.ts";

export function afterTurnEnded(context: ExecuteContext, environment: SessionEnvironment): StepDecision {
  if (context.read(environment.persistence.parentSession) === undefined) return moveTo(AgentStepType.AwaitUserMessage);
  return moveToMany([movement(AgentStepType.AwaitUserMessage), movement(AgentStepType.NotifyParentSession)]);
}
