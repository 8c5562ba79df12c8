/**
 * `exportSession`: a recorded session as a fixture: each ended turn's user
 * messages, settings, model calls (request and response) and tool calls
 * with their effect classes. It only reads, on one consistent view.
 */
import type { Client } from "@perdure/engine";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentToolCallRecord } from "../../contract/values/agent-tool-call.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { isoNow } from "../session-operations.ts";
import { turnNumberOfId, turnRecordKey } from "../records/turn-key.ts";
import { sessionFixtureFormat, sessionFixtureVersion, type SessionFixture, type SessionFixtureToolCall, type SessionFixtureTurn } from "./session-fixture.ts";

function fixtureToolCall(call: AgentToolCallRecord): SessionFixtureToolCall {
  const answers = call.inputAnswers === undefined || call.inputAnswers.length === 0 ? {} : { input_answers: call.inputAnswers.map((answer) => ({ resolution: answer.resolution, answer: answer.answer })) };
  return {
    ...answers,
    tool_call_id: call.toolCallId,
    tool_name: call.toolName,
    arguments: call.arguments,
    effect: call.effect,
    requires_approval: call.requiresApproval,
    status: call.status,
    output: call.output,
    error: call.error,
  };
}

/** The user messages that start a turn: its first messages, up to the first that is not the user's. */
function openingUserTexts(messages: readonly AgentMessage[], turnId: string): string[] {
  const turnMessages = messages.filter((message) => message.turnId === turnId);
  const firstOther = turnMessages.findIndex((message) => message.role !== "user");
  return (firstOther === -1 ? turnMessages : turnMessages.slice(0, firstOther)).map((message) => message.text);
}

/**
 * Exports session `sessionId` as a fixture for `replaySession`.
 *
 * @example
 * const fixture = await exportSession(client, supportAgentFlow, "session-1");
 * writeFileSync("session-1.fixture.json", JSON.stringify(fixture, null, 2));
 */
export async function exportSession(client: Client, flow: AgentSessionFlow, sessionId: string): Promise<SessionFixture> {
  const read = await client.readFlowState(sessionId, async (reader) => ({
    state: await reader.get(flow.agentState),
    window: await reader.list(flow.agentMessages),
    chunks: await reader.list(flow.agentMessageChunks),
    checkpoints: await reader.list(flow.turnCheckpoints),
    toolCalls: await reader.list(flow.turnToolCalls),
    modelCalls: await reader.list(flow.modelCalls),
    lineage: await reader.get(flow.sessionLineage),
  }));
  const messages = [...read.chunks.flatMap((entry) => entry.value.messages), ...read.window.map((entry) => entry.value)].sort((left, right) => left.sequence - right.sequence);
  const endedTurns = read.state === undefined ? 0 : read.state.activeTurnId === null ? read.state.turnCount : read.state.turnCount - 1;
  const turns: SessionFixtureTurn[] = [];
  for (let number = 1; number <= endedTurns; number += 1) {
    const turnId = `turn-${number}`;
    const key = turnRecordKey(number);
    const toolCalls = read.toolCalls.find((entry) => entry.key === key)?.value;
    const checkpoint = read.checkpoints.find((entry) => entry.key === key)?.value;
    const mode = checkpoint?.interactionMode ?? "chat";
    const startedBy = mode === "executing" ? "plan_execution" : checkpoint?.startedBy ?? "message";
    turns.push({
      turn_id: turnId,
      user_messages: openingUserTexts(messages, turnId),
      session_settings: checkpoint?.sessionSettings ?? null,
      model_calls: read.modelCalls
        .filter((entry) => turnNumberOfId(entry.value.turnId) === number)
        .map(({ value }) => ({ request: value.request, response: value.response, outcome: value.outcome, input_omitted: value.inputOmitted })),
      tool_calls: (toolCalls?.toolCalls ?? []).map(fixtureToolCall),
      inherited_from: toolCalls?.inheritedFrom ?? (read.lineage !== undefined && number <= read.lineage.throughTurn ? read.lineage.sourceSessionId : null),
      interaction_mode: mode,
      started_by: startedBy,
      ...(startedBy === "plan_execution" && checkpoint?.plan !== null && checkpoint?.plan !== undefined ? { plan_revision: checkpoint.plan.revision } : {}),
    });
  }
  return {
    format: sessionFixtureFormat,
    version: sessionFixtureVersion,
    flow_type: flow.flowType,
    session_id: sessionId,
    exported_at: isoNow(client.store.clock),
    lineage: read.lineage === undefined ? null : { source_session_id: read.lineage.sourceSessionId, through_turn: read.lineage.throughTurn },
    turns,
  };
}
