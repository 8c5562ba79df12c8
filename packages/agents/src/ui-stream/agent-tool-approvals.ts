/**
 * Tool approvals from the browser: reading the decisions of a message,
 * resolving one approval, and the approval route's stream.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import { personLockConflictRetryMs } from "../session/rpcs/person-lock-conflict-retry.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";

/** The most decisions a request is read for; the rest are ignored. */
export const maxAgentToolApprovalDecisions = 100;

/** One approval decision from the browser, bound to the turn of the message it came from. */
export interface AgentToolApprovalResponse {
  /** The approval's ID: the `interrupt_id` of its `tool-approval-request`. */
  approvalId: string;
  approved: boolean;
  /** Shown to the model as the rejection message; ignored for an approval. */
  reason?: string;
  /** The browser's tool call ID for the decision's part, if it had one. */
  toolCallId: string | null;
  /** The turn of the message the decision came from, or null when the message is not a turn's. */
  turnId: string | null;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The turn of an assistant message ID `<turnId>-assistant`, or null. */
export function turnIdOfMessageId(messageId: unknown): string | null {
  if (typeof messageId !== "string" || !messageId.endsWith("-assistant")) return null;
  const turnId = messageId.slice(0, -"-assistant".length);
  return turnId === "" ? null : turnId;
}

/**
 * The approval decisions of an assistant message from the browser: its tool
 * parts in state `approval-responded`, at most 100, each bound to the turn
 * of the message. The message is untrusted JSON; anything malformed is
 * skipped.
 *
 * @example
 * const approvals = readAgentToolApprovalResponses(messages.at(-1));
 * return resolveAgentToolApprovalsWithUIMessageStream({ client, flow, flowId: id, approvals, signal: request.signal });
 */
export function readAgentToolApprovalResponses(message: unknown): AgentToolApprovalResponse[] {
  const object = asRecord(message);
  if (object === undefined || !Array.isArray(object.parts)) return [];
  const turnId = object.role === "assistant" || object.role === undefined ? turnIdOfMessageId(object.id) : null;
  const decisions: AgentToolApprovalResponse[] = [];
  for (const value of object.parts as unknown[]) {
    if (decisions.length >= maxAgentToolApprovalDecisions) break;
    const part = asRecord(value);
    const approval = asRecord(part?.approval);
    const isToolPart = typeof part?.type === "string" && (part.type === "dynamic-tool" || part.type.startsWith("tool-"));
    if (!isToolPart || part?.state !== "approval-responded" || approval === undefined) continue;
    if (typeof approval.id !== "string" || approval.id === "" || typeof approval.approved !== "boolean") continue;
    decisions.push({
      approvalId: approval.id,
      approved: approval.approved,
      ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}),
      toolCallId: typeof part.toolCallId === "string" ? part.toolCallId : null,
      turnId,
    });
  }
  return decisions;
}

/**
 * The first 100 decisions, keeping the first per approval ID. Decisions that
 * arrive from anywhere but {@link readAgentToolApprovalResponses} are checked
 * here too.
 */
export function selectAgentToolApprovalDecisions(approvals: readonly unknown[]): AgentToolApprovalResponse[] {
  if (!Array.isArray(approvals)) throw new InvalidInputError("approvals must be an array: pass what readAgentToolApprovalResponses returned");
  const seen = new Set<string>();
  const selected: AgentToolApprovalResponse[] = [];
  for (const value of approvals.slice(0, maxAgentToolApprovalDecisions)) {
    const decision = asRecord(value);
    if (decision === undefined || typeof decision.approvalId !== "string" || typeof decision.approved !== "boolean") continue;
    if (seen.has(decision.approvalId)) continue;
    seen.add(decision.approvalId);
    selected.push({
      approvalId: decision.approvalId,
      approved: decision.approved,
      ...(typeof decision.reason === "string" ? { reason: decision.reason } : {}),
      toolCallId: typeof decision.toolCallId === "string" ? decision.toolCallId : null,
      turnId: typeof decision.turnId === "string" ? decision.turnId : null,
    });
  }
  return selected;
}

/** Options of {@link resolveAgentToolApproval}. */
export interface ResolveAgentToolApprovalOptions extends AgentUIStreamSessionOptions {
  approvalId: string;
  approved: boolean;
  /** The rejection message the model sees; ignored for an approval. @default none */
  reason?: string | undefined;
  /** Apply the decision only while this turn is the active one. @default the active turn, whichever it is */
  turnId?: string | undefined;
}

/** How a decision fared. */
export type AgentToolApprovalOutcome =
  | "applied"
  /** No approval with this ID is pending in the active turn (answered, expired, another turn's, or unknown). */
  | "not_pending";

/** Resolves one approval if it is pending in the active turn, retrying while a Step holds `PendingInterrupts`. */
export async function applyAgentToolApprovalDecision(
  session: AgentUIStreamSession,
  decision: { approvalId: string; approved: boolean; reason?: string | undefined; turnId?: string | undefined },
  signal?: AbortSignal,
): Promise<AgentToolApprovalOutcome> {
  const { client, flow, flowId } = session;
  const [state, pending] = await client.getAttributes(flowId, flow.agentState, flow.pendingInterrupts);
  const activeTurnId = state?.activeTurnId ?? null;
  if (activeTurnId === null || (decision.turnId !== undefined && decision.turnId !== activeTurnId)) return "not_pending";
  const interrupt = (pending ?? []).find((candidate) => candidate.interruptId === decision.approvalId && candidate.kind === "approval" && candidate.turnId === activeTurnId);
  if (interrupt === undefined) return "not_pending";
  const isResolved = await client.invokeRPC(flow.resolveInterrupt, flowId, {
    interruptId: interrupt.interruptId,
    approved: decision.approved,
    rejectionMessage: decision.approved ? null : (decision.reason ?? null),
  }, { lockConflictRetryMs: personLockConflictRetryMs, signal });
  return isResolved ? "applied" : "not_pending";
}

/**
 * Resolves one approval with `resolve_interrupt` when it is pending in the
 * active turn (and in `turnId`, when given); true when it was applied. For
 * applications that keep one stream open (`finishWhenAwaitingApproval: false`)
 * and answer approvals from their own route.
 *
 * @example
 * const isApplied = await resolveAgentToolApproval({ client, flow, flowId, approvalId, approved: false, reason: "Not this order" });
 */
export async function resolveAgentToolApproval(options: ResolveAgentToolApprovalOptions): Promise<boolean> {
  const session = resolveAgentUIStreamSession(options);
  if (typeof options.approvalId !== "string" || options.approvalId === "") throw new InvalidInputError(`approvalId ${describeValue(options.approvalId)} is invalid: pass the approval's ID`);
  if (typeof options.approved !== "boolean") throw new InvalidInputError(`approved ${describeValue(options.approved)} is invalid: use true or false`);
  const outcome = await applyAgentToolApprovalDecision(session, {
    approvalId: options.approvalId,
    approved: options.approved,
    reason: options.reason,
    turnId: options.turnId,
  });
  return outcome === "applied";
}
