/**
 * Reads what a session held at a turn boundary, on one consistent view of
 * the store: the transcript up to the boundary (window messages and
 * chunks), and the plan, summary, settings and usage of that moment, from
 * the next turn's checkpoint or, at the session's end, from the live values.
 */
import { InvalidInputError, type Client, type FlowStateReader } from "@perdure/engine";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import { messageSequenceKey } from "../../contract/values/agent-message.ts";
import type { AgentPlan } from "../../contract/values/agent-plan.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import { emptyAgentUsage, type AgentUsage } from "../../contract/values/agent-usage.ts";
import type { ContextSummary } from "../../contract/values/context-summary.ts";
import type { SessionLineage } from "../../contract/values/session-lineage.ts";
import type { SessionSettings } from "../../contract/values/session-settings.ts";
import type { AgentMessageChunk } from "../messages/agent-message-chunk.ts";
import type { AgentMessageIndex } from "../messages/agent-message-index.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import type { ModelCallRecord } from "../records/model-call-record.ts";
import type { TurnCheckpoint } from "../records/turn-checkpoint.ts";
import { turnRecordKey } from "../records/turn-key.ts";
import type { TurnToolCalls } from "../records/turn-tool-calls.ts";

/** A session as it stood after `throughTurn` turns. */
export interface SessionBoundary {
  state: AgentState;
  throughTurn: number;
  /** Messages 1 to this number belong to the boundary. */
  messageCount: number;
  lastTurnError: string | null;
  plan: AgentPlan | null;
  contextSummary: ContextSummary | null;
  sessionSettings: SessionSettings | null;
  usage: AgentUsage;
  /** The index cut at the boundary, or undefined while every message is in the window. */
  index: AgentMessageIndex | undefined;
  windowMessages: { key: string; value: AgentMessage }[];
  chunks: { key: string; value: AgentMessageChunk }[];
  checkpoints: { key: string; value: TurnCheckpoint }[];
  turnToolCalls: { key: string; value: TurnToolCalls }[];
  modelCalls: { key: string; value: ModelCallRecord }[];
  /** `ApprovedToolCalls` entries of the tool calls in `turnToolCalls`: the approvals of the kept turns. */
  approvedToolCalls: { key: string; value: string }[];
  /** `UserMessageClientIds` entries of the kept messages. */
  userMessageClientIds: { key: string; value: string }[];
  lineage: SessionLineage | undefined;
}

function checkThroughTurn(sessionId: string, state: AgentState, throughTurn: unknown): number {
  if (typeof throughTurn !== "number" || !Number.isSafeInteger(throughTurn) || throughTurn < 0 || throughTurn > state.turnCount) {
    throw new InvalidInputError(`throughTurn ${JSON.stringify(throughTurn) ?? String(throughTurn)} is invalid for session ${sessionId}: use an integer from 0 to ${state.turnCount}, the turns it has`);
  }
  if (throughTurn === state.turnCount && state.activeTurnId !== null) {
    throw new InvalidInputError(`turn-${throughTurn} of session ${sessionId} has not ended: fork through turn ${throughTurn - 1} (before it), or after it has ended`);
  }
  return throughTurn;
}

/** The index of a fork whose messages end at `messageCount`. */
function cutIndex(index: AgentMessageIndex | undefined, messageCount: number): AgentMessageIndex | undefined {
  if (index === undefined) return undefined;
  const chunks = index.chunks
    .filter((chunk) => chunk.firstSequence <= messageCount)
    .map((chunk) => ({ firstSequence: chunk.firstSequence, lastSequence: Math.min(chunk.lastSequence, messageCount) }));
  return { chunks, firstSequence: Math.min(index.firstSequence, messageCount + 1), windowFirstSequence: Math.min(index.windowFirstSequence, messageCount + 1) };
}

async function readAtBoundary(reader: FlowStateReader, persistence: AgentSessionPersistence, sessionId: string, state: AgentState, throughTurn: number) {
  if (throughTurn === state.turnCount) {
    return {
      messageCount: state.messageCount,
      lastTurnError: state.lastTurnError,
      plan: (await reader.get(persistence.agentPlan)) ?? null,
      contextSummary: (await reader.get(persistence.contextSummary)) ?? null,
      sessionSettings: (await reader.get(persistence.sessionSettings)) ?? null,
      usage: (await reader.get(persistence.agentUsage)) ?? emptyAgentUsage(),
    };
  }
  const checkpoint = await reader.get(persistence.turnCheckpoints.instance(turnRecordKey(throughTurn + 1)));
  if (checkpoint === undefined) {
    throw new InvalidInputError(`session ${sessionId} has no checkpoint before turn-${throughTurn + 1}: that turn started before this release recorded turn checkpoints, so it cannot be forked there`);
  }
  return checkpoint;
}

/** Reads session `sessionId` at the boundary after `throughTurn` turns. */
export async function readSessionBoundary(client: Client, persistence: AgentSessionPersistence, sessionId: string, throughTurn: unknown): Promise<SessionBoundary> {
  return client.readFlowState(sessionId, async (reader) => {
    const state = await reader.get(persistence.agentState);
    if (state === undefined) throw new InvalidInputError(`session ${sessionId} has not started yet (it has no AgentState); fork it once its first Step ran`);
    const turns = checkThroughTurn(sessionId, state, throughTurn);
    const at = await readAtBoundary(reader, persistence, sessionId, state, turns);
    const upToMessage = { toKey: messageSequenceKey(at.messageCount + 1) };
    const upToTurn = { toKey: turnRecordKey(turns + 1) };
    const chunks = (await reader.list(persistence.agentMessageChunks, upToMessage)).map(({ key, value }) => ({
      key,
      value: { ...value, messages: value.messages.filter((message) => message.sequence <= at.messageCount) },
    }));
    const turnToolCalls = await reader.list(persistence.turnToolCalls, upToTurn);
    const keptToolCallIds = new Set(turnToolCalls.flatMap((entry) => entry.value.toolCalls.map((call) => call.toolCallId)));
    return {
      state,
      throughTurn: turns,
      messageCount: at.messageCount,
      lastTurnError: at.lastTurnError,
      plan: at.plan,
      contextSummary: at.contextSummary,
      sessionSettings: at.sessionSettings,
      usage: at.usage,
      index: cutIndex(await reader.get(persistence.agentMessageIndex), at.messageCount),
      windowMessages: await reader.list(persistence.agentMessages, upToMessage),
      chunks: chunks.filter((chunk) => chunk.value.messages.length > 0),
      checkpoints: await reader.list(persistence.turnCheckpoints, upToTurn),
      turnToolCalls,
      modelCalls: await reader.list(persistence.modelCalls, upToTurn),
      approvedToolCalls: (await reader.list(persistence.approvedToolCalls)).filter((entry) => keptToolCallIds.has(entry.key)),
      userMessageClientIds: await reader.list(persistence.userMessageClientIds, upToMessage),
      lineage: await reader.get(persistence.sessionLineage),
    };
  });
}
