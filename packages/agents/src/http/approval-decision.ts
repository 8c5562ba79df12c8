/**
 * An approval decided over plain REST, outside `useChat`: the decision
 * applies when the approval is pending in the session's active turn, and a
 * refusal says which of the usual mistakes it is (a question's ID, a
 * decision made already, an ID that is not this session's).
 */
import type { Client } from "@perdure/engine";
import { approvalInterruptId } from "../contract/values/agent-interrupt.ts";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { resolveAgentToolApproval } from "../ui-stream/agent-tool-approvals.ts";
import { HttpRefusal } from "./http-refusal.ts";

/** Why an approval that is not pending cannot be decided: decided already (409), or not this session's (404). */
async function notPendingRefusal(client: Client, flow: AgentSessionFlow, sessionId: string, interruptId: string): Promise<HttpRefusal> {
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, sessionId);
  const call = snapshot.toolCalls.find((candidate) => candidate.requiresApproval && approvalInterruptId(candidate.toolCallId) === interruptId);
  if (call !== undefined) return new HttpRefusal(409, `approval ${interruptId} was decided already: its ${call.toolName} call is ${call.status}`);
  // The turn's call records go when the turn ends; its result message stays in the transcript.
  const result = snapshot.messages.find((message) => message.role === "tool" && message.toolCallId !== undefined && approvalInterruptId(message.toolCallId) === interruptId);
  if (result !== undefined) return new HttpRefusal(409, `approval ${interruptId} was decided already: its ${result.toolName ?? "tool"} call finished in ${result.turnId ?? "an earlier turn"}`);
  return new HttpRefusal(404, `approval ${interruptId} is not one of session ${sessionId}'s: use the interrupt_id of a pending approval from the session's snapshot`);
}

/**
 * Approves or rejects the approval `interruptId` of the session; resolves
 * when the session took the decision, and throws an `HttpRefusal` that says
 * why otherwise.
 */
export async function decideApproval(
  client: Client,
  flow: AgentSessionFlow,
  sessionId: string,
  interruptId: string,
  decision: { approved: boolean; reason?: string },
): Promise<void> {
  const [pending] = await client.getAttributes(sessionId, flow.pendingInterrupts);
  const interrupt = (pending ?? []).find((candidate) => candidate.interruptId === interruptId);
  if (interrupt?.kind === "question") {
    throw new HttpRefusal(409, `interrupt ${interruptId} is a question, not an approval: answer it with POST …/sessions/${sessionId}/questions/${interruptId}`);
  }
  if (interrupt === undefined) throw await notPendingRefusal(client, flow, sessionId, interruptId);
  const isApplied = await resolveAgentToolApproval({ client, flow, flowId: sessionId, approvalId: interruptId, approved: decision.approved, reason: decision.reason });
  if (!isApplied) {
    throw new HttpRefusal(409, `approval ${interruptId} is no longer pending: it was decided, or its turn ended, while this request ran`);
  }
}
