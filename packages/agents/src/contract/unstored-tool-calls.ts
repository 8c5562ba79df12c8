/**
 * The turn's final tool calls whose results are not stored messages yet: the
 * previous response's calls for a runner that stores its turn as it goes.
 */
import type { AgentTurnContext } from "./agent-framework-runner.ts";
import type { AgentToolCall } from "./values/agent-tool-call.ts";

/**
 * `turn.toolCalls` holds every final call of the active turn, across all its
 * model responses. A runner that returns `ToolCallsRequested.newMessages`
 * has stored the results of earlier rounds; this picks the calls whose
 * results it still has to store, in the order the model made them.
 *
 * @example
 * const results = selectUnstoredToolCalls(turn).map((call) => toolResultMessage(call));
 */
export function selectUnstoredToolCalls(turn: Pick<AgentTurnContext, "turnId" | "messages" | "toolCalls">): AgentToolCall[] {
  const stored = new Set<string>();
  for (const message of turn.messages) {
    if (message.role === "tool" && message.turnId === turn.turnId && message.toolCallId !== undefined) stored.add(message.toolCallId);
  }
  return turn.toolCalls.filter((call) => !stored.has(call.toolCallId));
}
