/**
 * Stored messages as AI SDK `UIMessage` objects, and the `useChat` load
 * route's answer: the messages and the active turn's resume token.
 */
import { approvalInterruptId } from "../contract/values/agent-interrupt.ts";
import { messageSequenceKey, type AgentMessage } from "../contract/values/agent-message.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import { agentTurnMessageId } from "./agent-event-parts.ts";
import { questionChunkFromInterrupt } from "./agent-ui-data-parts.ts";
import { findTurnOrigin } from "./agent-event-stream-positions.ts";
import type { AgentDynamicToolUIPart, AgentUIMessage } from "./agent-ui-message-types.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";
import { AgentUIStreamTokenCodec } from "./agent-ui-stream-token.ts";
import { turnStartPosition } from "./agent-ui-stream-run.ts";
import { parseToolCallArguments, readStoredToolCalls } from "./stored-tool-calls.ts";
import { toolTaskChunkFromRecord } from "./tool-task-data-parts.ts";
import { failedToolResultPrefix, outcomeUnknownAfterToolErrorPrefix, outcomeUnknownToolResult, toolCallNotRunErrorPrefix } from "../contract/values/result-texts.ts";

/** What the `useChat` load route answers. */
export interface AgentSessionUIMessages {
  /** The stored messages as UI messages, oldest first. */
  messages: AgentUIMessage[];
  /**
   * Replays the active turn from its first retained event; null when no turn
   * is active or none of its events is retained (poll until the turn ends).
   */
  resumeToken: string | null;
}

type ToolPartInput = { toolCallId: string; toolName: string; input: unknown };

function toolPart(call: ToolPartInput): AgentDynamicToolUIPart {
  return { type: "dynamic-tool", toolCallId: call.toolCallId, toolName: call.toolName, state: "input-available", input: call.input };
}

/** The part of an active turn's record: its approval, its run, or its outcome. */
function recordPart(record: AgentToolCallRecord, input: unknown, pendingApprovalId: string | undefined): AgentDynamicToolUIPart {
  const base = { type: "dynamic-tool" as const, toolCallId: record.toolCallId, toolName: record.toolName, input };
  const approvalId = approvalInterruptId(record.toolCallId);
  const granted = record.requiresApproval ? { approval: { id: approvalId, approved: true as const } } : {};
  switch (record.status) {
    case "awaiting_approval":
      return pendingApprovalId === undefined ? { ...base, state: "input-available" } : { ...base, state: "approval-requested", approval: { id: pendingApprovalId } };
    case "approved":
      return record.requiresApproval ? { ...base, state: "approval-responded", approval: { id: approvalId, approved: true } } : { ...base, state: "input-available" };
    case "succeeded":
      return { ...base, state: "output-available", output: record.output, ...granted };
    case "failed":
      return { ...base, state: "output-error", errorText: record.error ?? record.output ?? "the tool call failed", ...granted };
    case "outcome_unknown":
      return { ...base, state: "output-error", errorText: record.output ?? record.error ?? "the tool call's outcome is unknown", ...granted };
    case "rejected":
      return { ...base, state: "output-denied", approval: { id: approvalId, approved: false, ...(record.error === null ? {} : { reason: record.error }) } };
    default:
      return { ...base, state: "input-available" };
  }
}

class UIMessageBuilder {
  readonly messages: AgentUIMessage[] = [];
  private assistant: { turnId: string | null; message: AgentUIMessage } | null = null;

  standalone(message: AgentMessage, role: "user" | "system", id = `message-${message.sequence}`): void {
    this.assistant = null;
    this.messages.push({ id, role, parts: [{ type: "text", text: message.text }] });
  }

  assistantOf(turnId: string | null, sequence: number): AgentUIMessage {
    if (this.assistant === null || this.assistant.turnId !== turnId) {
      const message: AgentUIMessage = { id: turnId === null ? `message-${sequence}` : agentTurnMessageId(turnId), role: "assistant", parts: [] };
      this.assistant = { turnId, message };
      this.messages.push(message);
    }
    return this.assistant.message;
  }

  /** Replaces the tool part of `toolCallId` (the latest one), or appends it. */
  setToolPart(message: AgentUIMessage, part: AgentDynamicToolUIPart): void {
    const index = message.parts.findLastIndex((candidate) => candidate.type === "dynamic-tool" && candidate.toolCallId === part.toolCallId);
    if (index === -1) message.parts.push(part);
    else message.parts[index] = part;
  }

  toolPartOf(message: AgentUIMessage, toolCallId: string): AgentDynamicToolUIPart | undefined {
    return message.parts.findLast((candidate): candidate is AgentDynamicToolUIPart => candidate.type === "dynamic-tool" && candidate.toolCallId === toolCallId);
  }
}

/**
 * Maps a `get_agent_snapshot` result to UI messages. User and system
 * messages stand alone; a turn's assistant and tool messages form its
 * assistant message `<turnId>-assistant`: a `step-start` and the text per
 * model response, a dynamic tool part per call. A stored tool result is the
 * text the model saw, so it shows in `output-available`, except the
 * session's own texts for a failed call or an unknown outcome, which show in
 * `output-error`. The active turn's tool call records add its approvals, its
 * running calls and their outcomes, a `data-agent-question` part after each
 * call with a pending question, a `data-agent-timer` part after each
 * durable wait, and a `data-agent-tool-task` part after each call that
 * started a tool task.
 *
 * @example
 * const messages = convertAgentSnapshotToUIMessages(await client.invokeRPC(flow.getAgentSnapshot, sessionId));
 */
/** The `reason` argument of a `durable_wait` call. */
function timerReasonOf(input: unknown): string {
  const reason = typeof input === "object" && input !== null ? (input as { reason?: unknown }).reason : undefined;
  return typeof reason === "string" ? reason : "";
}

/** True for a stored result the session wrote for a call that failed or whose outcome is unknown. */
function storedResultIsError(text: string): boolean {
  return text === outcomeUnknownToolResult || text.startsWith(toolCallNotRunErrorPrefix) || text.startsWith(failedToolResultPrefix)
    || text.startsWith(outcomeUnknownAfterToolErrorPrefix);
}

/** Options of {@link convertAgentSnapshotToUIMessages}. */
export interface ConvertAgentSnapshotOptions {
  /**
   * Approval IDs of approved calls of finished turns, by tool call ID (the
   * session's `ApprovedToolCalls`): their parts keep `approval`
   * `{ id, approved: true }`, as the live stream left them.
   * @default none
   */
  approvedToolCalls?: ReadonlyMap<string, string>;
  /**
   * The client's IDs of user messages sent with one, by sequence (the
   * session's `UserMessageClientIds`): those messages keep them; others are
   * `message-<sequence>`.
   * @default none
   */
  userMessageClientIds?: ReadonlyMap<number, string>;
}

export function convertAgentSnapshotToUIMessages(snapshot: AgentSnapshot, options: ConvertAgentSnapshotOptions = {}): AgentUIMessage[] {
  const builder = new UIMessageBuilder();
  const approvedToolCalls = options.approvedToolCalls ?? new Map<string, string>();
  for (const message of snapshot.messages) {
    switch (message.role) {
      case "user":
        builder.standalone(message, "user", options.userMessageClientIds?.get(message.sequence));
        break;
      case "system":
        builder.standalone(message, "system");
        break;
      case "assistant": {
        const target = builder.assistantOf(message.turnId, message.sequence);
        target.parts.push({ type: "step-start" });
        if (message.text !== "") target.parts.push({ type: "text", text: message.text, state: "done" });
        for (const call of readStoredToolCalls(message.frameworkItem)) target.parts.push(toolPart(call));
        break;
      }
      case "tool": {
        const target = builder.assistantOf(message.turnId, message.sequence);
        const toolCallId = message.toolCallId ?? `message-${message.sequence}`;
        const existing = builder.toolPartOf(target, toolCallId);
        const base = { type: "dynamic-tool" as const, toolCallId, toolName: existing?.toolName ?? message.toolName ?? "", input: existing?.input ?? null };
        // The session's own texts for failed and unknown outcomes keep their warning after a reload.
        const approvalId = approvedToolCalls.get(toolCallId);
        const granted = approvalId === undefined ? {} : { approval: { id: approvalId, approved: true as const } };
        builder.setToolPart(target, storedResultIsError(message.text)
          ? { ...base, state: "output-error", errorText: message.text, ...granted }
          : { ...base, state: "output-available", output: message.text, ...granted });
        break;
      }
    }
  }
  const activeTurnId = snapshot.state?.activeTurnId ?? null;
  const records = snapshot.toolCalls.filter((record) => record.turnId === activeTurnId);
  if (activeTurnId !== null && records.length > 0) {
    const target = builder.assistantOf(activeTurnId, (snapshot.state?.messageCount ?? 0) + 1);
    for (const record of [...records].sort((left, right) => left.deferralOrder - right.deferralOrder)) {
      const pending = snapshot.pendingInterrupts.find((interrupt) => interrupt.kind === "approval" && interrupt.toolCallId === record.toolCallId);
      const input = builder.toolPartOf(target, record.toolCallId)?.input ?? parseToolCallArguments(record.arguments);
      builder.setToolPart(target, recordPart(record, input, pending?.interruptId));
      const task = toolTaskChunkFromRecord(record);
      if (task !== undefined) target.parts.push(task);
      if (record.status === "waiting_for_timer" && record.waitUntil !== undefined) {
        target.parts.push({ type: "data-agent-timer", id: record.toolCallId, data: { toolCallId: record.toolCallId, waitUntil: record.waitUntil, reason: timerReasonOf(input) } });
      }
      for (const interrupt of snapshot.pendingInterrupts) {
        if (interrupt.kind === "question" && interrupt.toolCallId === record.toolCallId && interrupt.turnId === activeTurnId) target.parts.push(questionChunkFromInterrupt(interrupt));
      }
    }
  }
  return builder.messages;
}

/**
 * The approvals of the snapshot's finished tool calls, from the session's
 * `ApprovedToolCalls`: one read of the entries the snapshot's tool messages name.
 */
export async function readApprovedToolCalls(session: AgentUIStreamSession, snapshot: AgentSnapshot): Promise<Map<string, string>> {
  const toolCallIds = [...new Set(snapshot.messages.flatMap((message) => (message.role === "tool" && message.toolCallId !== undefined ? [message.toolCallId] : [])))];
  if (toolCallIds.length === 0) return new Map();
  const approvals = await session.client.getAttributes(session.flowId, ...toolCallIds.map((toolCallId) => session.flow.approvedToolCalls.instance(toolCallId)));
  const approved = new Map<string, string>();
  toolCallIds.forEach((toolCallId, index) => {
    const approvalId = approvals[index];
    if (approvalId !== undefined) approved.set(toolCallId, approvalId);
  });
  return approved;
}

/**
 * The client's IDs of the snapshot's user messages, from the session's
 * `UserMessageClientIds`. An ID an earlier message of the snapshot already
 * has is left out, so the returned messages' IDs stay unique.
 */
export async function readUserMessageClientIds(session: AgentUIStreamSession, snapshot: AgentSnapshot): Promise<Map<number, string>> {
  const sequences = snapshot.messages.flatMap((message) => (message.role === "user" ? [message.sequence] : []));
  if (sequences.length === 0) return new Map();
  const ids = await session.client.getAttributes(session.flowId, ...sequences.map((sequence) => session.flow.userMessageClientIds.instance(messageSequenceKey(sequence))));
  const clientIds = new Map<number, string>();
  const taken = new Set<string>();
  sequences.forEach((sequence, index) => {
    const id = ids[index];
    if (id === undefined || taken.has(id)) return;
    taken.add(id);
    clientIds.set(sequence, id);
  });
  return clientIds;
}

/**
 * The `useChat` load route's answer: the stored messages, and a token that
 * replays the active turn from its first retained event. Pass the token as
 * the initial resume token and `resume: resumeToken !== null` to `useChat`.
 *
 * @example
 * // GET /api/chat/:id
 * return Response.json(await readAgentSessionUIMessages({ client, flow, flowId: sessionId }));
 */
export async function readAgentSessionUIMessages(options: AgentUIStreamSessionOptions): Promise<AgentSessionUIMessages> {
  const session = resolveAgentUIStreamSession(options);
  const snapshot = await session.client.invokeRPC(session.flow.getAgentSnapshot, session.flowId);
  const messages = convertAgentSnapshotToUIMessages(snapshot, {
    approvedToolCalls: await readApprovedToolCalls(session, snapshot),
    userMessageClientIds: await readUserMessageClientIds(session, snapshot),
  });
  const activeTurnId = snapshot.state?.activeTurnId ?? null;
  if (activeTurnId === null) return { messages, resumeToken: null };
  const origin = await findTurnOrigin(session, activeTurnId);
  if (!origin.isFound) return { messages, resumeToken: null };
  const tokens = await AgentUIStreamTokenCodec.forStore(session.client.store);
  return { messages, resumeToken: tokens.encode(session.flowId, turnStartPosition(activeTurnId, origin.origin)) };
}
