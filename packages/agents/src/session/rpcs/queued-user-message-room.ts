/** The per-session bound on user messages that wait for a turn. */
import type { RpcContext, RpcPublishPlan } from "@perdure/engine";
import type { AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import { QueuedUserMessagesFullError } from "../queued-user-messages-full-error.ts";
import type { SessionEnvironment } from "../session-environment.ts";

/**
 * Throws {@link QueuedUserMessagesFullError} when `message` would take the
 * session's waiting messages (queued and steered) past
 * `maxQueuedUserMessages` or `maxQueuedUserMessageBytes`. Call it in the
 * RPC that then publishes: the RPC's store transaction holds the session's
 * Flow row from its start (PostgreSQL `FOR UPDATE`; SQLite's write lock with
 * replay), so concurrent senders take turns and the bound is exact without
 * an RPC lock that would refuse sends while a Step runs.
 */
export async function ensureQueuedUserMessageRoom(context: RpcContext, environment: SessionEnvironment, message: AgentUserMessage): Promise<void> {
  const { persistence, options } = environment;
  const waiting = [
    ...(await context.listMessages(persistence.queuedUserMessages, { limit: options.maxQueuedUserMessages + 1 })),
    ...(await context.listMessages(persistence.steeredUserMessages, { limit: options.maxQueuedUserMessages + 1 })),
  ];
  const waitingBytes = waiting.reduce((total, entry) => total + Buffer.byteLength(entry.message.text), 0);
  const messageBytes = Buffer.byteLength(message.text);
  if (waiting.length + 1 > options.maxQueuedUserMessages) {
    throw new QueuedUserMessagesFullError(`session ${context.flowId} already has ${waiting.length} user messages waiting for a turn, the most maxQueuedUserMessages allows (${options.maxQueuedUserMessages}); wait for the running turn, or delete or steer a queued message`);
  }
  if (waitingBytes + messageBytes > options.maxQueuedUserMessageBytes) {
    throw new QueuedUserMessagesFullError(`session ${context.flowId} has ${waitingBytes} bytes of user messages waiting for a turn; this message's ${messageBytes} bytes would pass maxQueuedUserMessageBytes (${options.maxQueuedUserMessageBytes}); wait for the running turn, or delete or steer a queued message`);
  }
}

/**
 * The same bound as {@link ensureQueuedUserMessageRoom}, for a store that
 * publishes in one request (`RpcSpec.publishes`): the waiting messages plus
 * the new one number at most `maxQueuedUserMessages` and their texts (the
 * stored form's `text`) take at most `maxQueuedUserMessageBytes`. When it
 * does not hold, the handler runs and throws the error above.
 */
export function queuedUserMessageRoom(environment: SessionEnvironment): NonNullable<RpcPublishPlan<unknown>["room"]> {
  const { persistence, options } = environment;
  return {
    channels: [persistence.queuedUserMessages, persistence.steeredUserMessages],
    maxMessages: options.maxQueuedUserMessages,
    maxBytes: options.maxQueuedUserMessageBytes,
    field: "text",
  };
}
