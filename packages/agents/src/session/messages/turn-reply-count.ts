/**
 * Counts a turn's stored replies from its messages, for a turn whose
 * `TurnReplySequence` is missing or names another turn (such as one a 0.1.0
 * Worker started): the turn's messages after its leading user messages.
 */
import type { AgentMessage } from "../../contract/values/agent-message.ts";

/** How many of `messages` the turn stored after its user messages. */
export function countTurnReplies(messages: readonly AgentMessage[], turnId: string): number {
  const ofTurn = messages.filter((message) => message.turnId === turnId);
  const firstReply = ofTurn.findIndex((message) => message.role !== "user");
  return firstReply === -1 ? 0 : ofTurn.length - firstReply;
}
