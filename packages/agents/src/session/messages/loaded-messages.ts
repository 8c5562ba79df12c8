/**
 * The messages a Step loaded: the `AgentMessages` window plus the
 * `AgentMessageChunks` instances its movement or options selected, with this
 * Step's own staged writes, oldest first.
 */
import type { StepContext } from "@perdure/engine";
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import type { SessionEnvironment } from "../session-environment.ts";

/** Every loaded message, window and chunks, oldest first and each sequence once. */
export function loadedStoredMessages(context: StepContext, persistence: AgentSessionPersistence): AgentMessage[] {
  const { agentMessages, agentMessageChunks } = persistence;
  // Chunks first, then the window, in key order: keys are the zero-padded sequences, so in a consistent
  // session the sequences already rise. Only when they do not (a message twice, as a half-moved session
  // has, or out of order) are they deduplicated by sequence, the later one kept, and sorted.
  const ordered: AgentMessage[] = [];
  let rising = true;
  const add = (message: AgentMessage): void => {
    const last = ordered.at(-1);
    if (last !== undefined && !(message.sequence > last.sequence)) rising = false;
    ordered.push(message);
  };
  for (const key of context.loadedKeys(agentMessageChunks)) {
    for (const message of context.read(agentMessageChunks.instance(key))?.messages ?? []) add(message);
  }
  for (const key of context.loadedKeys(agentMessages)) {
    const message = context.read(agentMessages.instance(key));
    if (message !== undefined) add(message);
  }
  if (rising) return ordered;
  const bySequence = new Map<number, AgentMessage>();
  for (const message of ordered) bySequence.set(message.sequence, message);
  return [...bySequence.values()].sort((left, right) => left.sequence - right.sequence);
}

/**
 * Every loaded message, oldest first: the window plus the loaded chunks. In
 * `RunModel`, `ApplyTurnControl` and `CompactContext` those are the chunks
 * that overlap the model input; see `modelInputLoads`.
 */
export function loadedMessages(context: StepContext, environment: SessionEnvironment): AgentMessage[] {
  return loadedStoredMessages(context, environment.persistence);
}
