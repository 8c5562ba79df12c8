/**
 * `assertAgentSessionInvariants`: what holds for every session at rest,
 * whatever killed its Workers on the way; a boundary-kill scenario's
 * `checkInvariants` starts with it.
 */
import assert from "node:assert/strict";
import type { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { isFinalToolCallStatus } from "../contract/values/agent-tool-call.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";

/**
 * Reads the session's snapshot and throws an `AssertionError` unless:
 * message sequences run 1, 2, 3, … (from `AgentMessageIndex.firstSequence`
 * once retention deleted older ones) with no gap or repeat and match
 * `AgentState.messageCount`; no two tool result messages answer the same
 * call; and, when no turn is active, no tool call record, pending interrupt
 * or non-final call is left. Returns the snapshot for further checks.
 *
 * @example
 * const snapshot = await assertAgentSessionInvariants(client, sessionFlow, "session-1");
 * assert.equal(snapshot.state?.turnCount, 1);
 */
export async function assertAgentSessionInvariants(client: Client, flow: AgentSessionFlow, flowId: string): Promise<AgentSnapshot> {
  const snapshot = await client.invokeRPC(flow.getAgentSnapshot, flowId);
  // The session is at rest, so the index agrees with the snapshot.
  const [index] = await client.getAttributes(flowId, flow.agentMessageIndex);
  const state = snapshot.state;
  assert.ok(state !== null, `session ${flowId} has no AgentState`);
  const sequences = snapshot.messages.map((message) => message.sequence);
  // Retention may have deleted the oldest messages; the rest run without gaps from there.
  const first = index?.firstSequence ?? 1;
  assert.deepEqual(sequences, sequences.map((_sequence, index) => index + first), `the message sequences of ${flowId} are gapless from ${first}`);
  assert.equal(state.messageCount, first - 1 + snapshot.messages.length, `AgentState.messageCount of ${flowId} counts its stored and deleted messages`);
  const answered = snapshot.messages.filter((message) => message.role === "tool").map((message) => message.toolCallId);
  assert.deepEqual(answered, [...new Set(answered)], `each tool call of ${flowId} has at most one result message`);
  if (state.activeTurnId === null) {
    assert.deepEqual(snapshot.toolCalls.filter((call) => !isFinalToolCallStatus(call.status)), [], `no tool call of ${flowId} is left unfinished`);
    assert.deepEqual(snapshot.toolCalls, [], `an ended turn of ${flowId} keeps no tool call records`);
    assert.deepEqual(snapshot.pendingInterrupts, [], `an ended turn of ${flowId} leaves no pending interrupt`);
  }
  return snapshot;
}
