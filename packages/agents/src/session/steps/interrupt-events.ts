/** The payloads of `interrupt_raised` and `interrupt_resolved`, written once for approvals and questions. */
import type { AgentInterrupt } from "../../contract/values/agent-interrupt.ts";

/** `{"interrupt_id","kind","tool_call_id","tool_name","deadline","question","choices","allows_free_text"}`. */
export function interruptRaisedPayload(interrupt: AgentInterrupt): Record<string, unknown> {
  return {
    interrupt_id: interrupt.interruptId,
    kind: interrupt.kind,
    tool_call_id: interrupt.toolCallId,
    tool_name: interrupt.toolName,
    deadline: interrupt.deadline,
    question: interrupt.question ?? null,
    choices: interrupt.choices ?? null,
    allows_free_text: interrupt.allowsFreeText ?? null,
  };
}

/** `{"interrupt_id","kind","approved","answered","rejection_message","cancellation_reason"}`. */
export function interruptResolvedPayload(
  interrupt: Pick<AgentInterrupt, "interruptId" | "kind">,
  outcome: { approved: boolean; answered: boolean; rejectionMessage: string | null; cancellationReason?: "steered" | "turn_cancelled" | null },
): Record<string, unknown> {
  return {
    interrupt_id: interrupt.interruptId,
    kind: interrupt.kind,
    approved: outcome.approved,
    answered: outcome.answered,
    rejection_message: outcome.rejectionMessage,
    cancellation_reason: outcome.cancellationReason ?? null,
  };
}
