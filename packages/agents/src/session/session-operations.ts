import type { StepContext } from "@perdure/engine";
import type { AgentEventWriter } from "../contract/values/agent-event.ts";
import { messageSequenceKey, type AgentMessage, type FrameworkMessage } from "../contract/values/agent-message.ts";
import { withInteractionMode, type AgentState, type InteractionMode } from "../contract/values/agent-state.ts";
import { approvalInterruptId } from "../contract/values/agent-interrupt.ts";
import { wasApprovedAndRun, type AgentToolCallRecord, type AgentToolCallStatus } from "../contract/values/agent-tool-call.ts";
import type { AgentSessionPersistence } from "./persistence.ts";
import { loadedStoredMessages } from "./messages/loaded-messages.ts";
import { storeMessages } from "./messages/store-messages.ts";
import { countTurnReplies } from "./messages/turn-reply-count.ts";
import { copyTurnSessionSettings } from "./settings/turn-session-settings.ts";
import { writeTurnCheckpoint, writeTurnToolCalls } from "./records/record-writes.ts";

/** Anything that reads the store's clock: a Step's or an RPC's context. */
export interface StoreTimeSource {
  now(): number;
}

/**
 * The store's time as ISO 8601 text. Every time the session stores, and
 * every deadline it waits on, comes from the store's clock, which all
 * processes sharing the store read alike (the database server's on
 * PostgreSQL), never from this machine's `Date`, which may be minutes off.
 */
export function isoNow(clock: StoreTimeSource): string {
  return new Date(clock.now()).toISOString();
}

/** The deadline of an interrupt raised now, `interruptDeadlineMs` on the store's clock, or null without one. */
export function interruptDeadlineFromNow(clock: StoreTimeSource, interruptDeadlineMs: number | null): string | null {
  return interruptDeadlineMs === null ? null : new Date(clock.now() + interruptDeadlineMs).toISOString();
}

/** True once an interrupt's deadline passed on the store's clock, the clock its deadline Timer fires on. */
export function isPastInterruptDeadline(clock: StoreTimeSource, deadline: string | null): boolean {
  return deadline !== null && Date.parse(deadline) <= clock.now();
}

/** Reads `AgentState`, which every session Step after the start has. */
export function readState(context: StepContext, persistence: AgentSessionPersistence): AgentState {
  const state = context.read(persistence.agentState);
  if (state === undefined) throw new Error(`session ${context.flowId} has no AgentState; was it started with StartAgentSession?`);
  return state;
}

/**
 * Appends messages with the next sequences, rolling the window over into
 * chunks and applying retention in the same commit; returns the state with
 * the new count (not yet written). The Step must load `agentMessages.all()`.
 */
export function appendMessages(
  context: StepContext,
  persistence: AgentSessionPersistence,
  state: AgentState,
  messages: readonly FrameworkMessage[],
  turnId: string | null,
): AgentState {
  let count = state.messageCount;
  const createdAt = isoNow(context);
  const stored: AgentMessage[] = messages.map((message) => {
    count += 1;
    return {
      role: message.role,
      text: message.text,
      frameworkItem: message.frameworkItem ?? null,
      sequence: count,
      turnId,
      createdAt,
      ...(message.toolCallId === undefined ? {} : { toolCallId: message.toolCallId }),
      ...(message.toolName === undefined ? {} : { toolName: message.toolName }),
    };
  });
  storeMessages(context, persistence, stored, count);
  return { ...state, messageCount: count, updatedAt: createdAt };
}

/**
 * Stores the user message (or a steered turn's messages, in order) and
 * starts `turn-<n>`; returns the new state (not yet written).
 */
export async function startTurn(
  context: StepContext,
  persistence: AgentSessionPersistence,
  state: AgentState,
  userMessage: FrameworkMessage | readonly FrameworkMessage[],
  writeEvent: (turnId: string) => AgentEventWriter,
  interactionMode: InteractionMode = "chat",
  clientMessageIds: readonly (string | undefined)[] = [],
  startedBy: "message" | "steer" = "message",
): Promise<AgentState> {
  const turnId = `turn-${state.turnCount + 1}`;
  writeTurnCheckpoint(context, persistence, state, isoNow(context), { interactionMode, startedBy });
  const userMessages: readonly FrameworkMessage[] = Array.isArray(userMessage) ? userMessage : [userMessage as FrameworkMessage];
  const appended = appendMessages(context, persistence, state, userMessages, turnId);
  // The user messages took the sequences right after the state's count, in order.
  clientMessageIds.forEach((clientMessageId, index) => {
    if (clientMessageId !== undefined) context.write(persistence.userMessageClientIds.instance(messageSequenceKey(state.messageCount + 1 + index)), clientMessageId);
  });
  context.write(persistence.turnReplySequence, { turnId, sequence: appended.messageCount + 1 });
  context.write(persistence.frameworkRunState, null);
  copyTurnSessionSettings(context, persistence, turnId);
  await writeEvent(turnId).write("turn_started", { sequence: state.messageCount + 1 });
  return withInteractionMode(
    { ...appended, status: "running_model", activeTurnId: turnId, turnCount: state.turnCount + 1, acceptsTurnControl: true },
    interactionMode,
  );
}

/**
 * How many messages the turn stored after its user messages: from
 * `TurnReplySequence`, or, when that names another turn, from the turn's
 * loaded messages.
 */
export function turnMessageCount(context: StepContext, persistence: AgentSessionPersistence, state: AgentState, turnId: string): number {
  const reply = context.read(persistence.turnReplySequence);
  if (reply?.turnId !== turnId) return countTurnReplies(loadedStoredMessages(context, persistence), turnId);
  return Math.max(0, state.messageCount - reply.sequence + 1);
}

/**
 * Keeps the turn's tool call records (the loaded ones) in `TurnToolCalls`,
 * and in `ApprovedToolCalls` which calls a person approved, then deletes
 * them and the run state.
 */
export function clearTurnRecords(context: StepContext, persistence: AgentSessionPersistence): void {
  const records = context.loadedKeys(persistence.agentToolCalls).flatMap((key) => context.read(persistence.agentToolCalls.instance(key)) ?? []);
  writeTurnToolCalls(context, persistence, records);
  for (const record of records) {
    if (wasApprovedAndRun(record)) context.write(persistence.approvedToolCalls.instance(record.toolCallId), approvalInterruptId(record.toolCallId));
  }
  for (const key of context.loadedKeys(persistence.agentToolCalls)) context.write(persistence.agentToolCalls.instance(key), null);
  context.write(persistence.frameworkRunState, null);
}

/** Makes a tool call record final, tells the turn, and writes `tool_call_finished`. */
export async function finishToolCall(
  context: StepContext,
  persistence: AgentSessionPersistence,
  record: AgentToolCallRecord,
  status: Extract<AgentToolCallStatus, "succeeded" | "failed" | "rejected" | "outcome_unknown">,
  result: { output: string; error: string | null },
  events: AgentEventWriter,
): Promise<void> {
  context.write(persistence.agentToolCalls.instance(record.toolCallId), { ...record, status, output: result.output, error: result.error, finishedAt: isoNow(context) });
  context.publish(persistence.toolCallResults, { toolCallId: record.toolCallId });
  await events.write("tool_call_finished", { tool_call_id: record.toolCallId, tool_name: record.toolName, status });
}

/** Reads the tool call record a tool Step works on. */
export function readToolCall(context: StepContext, persistence: AgentSessionPersistence, toolCallId: string): AgentToolCallRecord {
  const record = context.read(persistence.agentToolCalls.instance(toolCallId));
  if (record === undefined) throw new Error(`session ${context.flowId} has no tool call record ${toolCallId}`);
  return record;
}

/** The tool call record, or undefined once its turn ended (a late duplicate Step of a settled call). */
export function readToolCallIfStored(context: StepContext, persistence: AgentSessionPersistence, toolCallId: string): AgentToolCallRecord | undefined {
  return context.read(persistence.agentToolCalls.instance(toolCallId));
}
