/**
 * How a Step tells whether its turn was steered or cancelled, and how it
 * records a call that had not started when that happened.
 */
import type { ExecuteContext, StepContext } from "@perdure/engine";
import type { AgentEventWriter } from "../../contract/values/agent-event.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import { toolCallCancelledResult } from "../../contract/values/result-texts.ts";
import type { ToolCallCancellationReason } from "../../contract/values/turn-control.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { finishToolCall } from "../session-operations.ts";
import { interruptResolvedPayload } from "./interrupt-events.ts";

/**
 * `"turn_cancelled"` when `cancel_turn` stopped the turn, `"steered"` while
 * a steered message waits (the Step must load `SteeredUserMessages`), else
 * null. A turn that does not accept turn control is never either.
 */
export function turnControlOf(context: StepContext, environment: SessionEnvironment, turnId: string): ToolCallCancellationReason | null {
  const { persistence } = environment;
  const state = context.read(persistence.agentState);
  if (state?.acceptsTurnControl !== true || state.activeTurnId !== turnId) return null;
  if (context.read(persistence.turnCancellationRequest)?.turnId === turnId) return "turn_cancelled";
  return context.pendingMessages(persistence.steeredUserMessages).length > 0 ? "steered" : null;
}

/** True when `cancel_turn` stopped this turn; needs no Channel load. */
export function isTurnCancelled(context: StepContext, environment: SessionEnvironment, turnId: string): boolean {
  return context.read(environment.persistence.turnCancellationRequest)?.turnId === turnId;
}

/** Records a call that had not started as `rejected` with its cancellation reason. */
export async function recordCancelledCall(
  context: ExecuteContext,
  environment: SessionEnvironment,
  record: AgentToolCallRecord,
  reason: ToolCallCancellationReason,
  events: AgentEventWriter,
): Promise<void> {
  const output = toolCallCancelledResult(reason);
  await finishToolCall(context, environment.persistence, { ...record, cancellationReason: reason }, "rejected", { output, error: output }, events);
}

/** Drops the interrupt from `PendingInterrupts` (the Step holds its lock) and writes its `interrupt_resolved` with the reason. */
export async function resolveCancelledInterrupt(
  context: ExecuteContext,
  environment: SessionEnvironment,
  interrupt: { interruptId: string; kind: "approval" | "question" },
  reason: ToolCallCancellationReason,
  events: AgentEventWriter,
): Promise<void> {
  const { persistence } = environment;
  const pending = context.read(persistence.pendingInterrupts) ?? [];
  if (pending.some((candidate) => candidate.interruptId === interrupt.interruptId)) {
    context.write(persistence.pendingInterrupts, pending.filter((candidate) => candidate.interruptId !== interrupt.interruptId));
  }
  await events.write("interrupt_resolved", interruptResolvedPayload(interrupt, { approved: false, answered: false, rejectionMessage: null, cancellationReason: reason }));
}
