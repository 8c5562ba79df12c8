/**
 * One page of `list_agent_messages`: up to `limit` stored messages before
 * `beforeSequence`, oldest first. Paging ends at the oldest stored message
 * (`AgentMessageIndex.firstSequence`), and every page carries
 * `deletedBeforeSequence` once retention deleted earlier messages.
 */
import type { RpcContext } from "@perdure/engine";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import { deletedBeforeSequenceOf, readStoredMessages } from "./stored-messages-reader.ts";

export async function readAgentMessagePage(
  context: RpcContext,
  persistence: AgentSessionPersistence,
  beforeSequence: number | null,
  limit: number,
): Promise<AgentMessagePage> {
  const state = await context.read(persistence.agentState);
  const index = await context.read(persistence.agentMessageIndex);
  const oldest = index?.firstSequence ?? 1;
  const end = Math.min((state?.messageCount ?? 0) + 1, beforeSequence ?? Number.MAX_SAFE_INTEGER);
  const first = Math.max(oldest, end - limit);
  const deletedBeforeSequence = deletedBeforeSequenceOf(index);
  if (end <= first) return { messages: [], nextBeforeSequence: null, deletedBeforeSequence };
  const messages = await readStoredMessages(context, persistence, index, { first, end });
  return { messages, nextBeforeSequence: first > oldest ? first : null, deletedBeforeSequence };
}
