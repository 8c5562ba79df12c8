/**
 * Retention: deletes the oldest chunk while every message in it is at or
 * before `ContextSummary.lastSequence` and at least `retainedMessageLimit`
 * stored messages come after it. So the newest `retainedMessageLimit`
 * messages and everything after the summary always stay. Every append and
 * `CompactContext` apply it.
 */
import type { StepContext } from "@perdure/engine";
import { messageSequenceKey } from "../../contract/values/agent-message.ts";
import type { AgentSessionPersistence } from "../persistence.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isSameAgentMessageIndex, type AgentMessageIndex } from "./agent-message-index.ts";
import { copyMessageIndex, readMessageIndex } from "./message-index-view.ts";
import type { ResolvedMessageStorageOptions } from "./message-storage-options.ts";

/** Deletes what retention allows from `index` (in place) and the store; returns whether anything was deleted. */
export function deleteRetainedChunks(
  context: StepContext,
  persistence: AgentSessionPersistence,
  options: ResolvedMessageStorageOptions,
  index: AgentMessageIndex,
  messageCount: number,
): boolean {
  const limit = options.retainedMessageLimit;
  const summary = context.read(persistence.contextSummary);
  if (limit === null || summary === undefined) return false;
  let deleted = false;
  for (;;) {
    const oldest = index.chunks[0];
    // Only a chunk below the window, where chunks run without gaps from the oldest stored message, can go.
    if (oldest === undefined || oldest.firstSequence !== index.firstSequence || oldest.lastSequence >= index.windowFirstSequence) break;
    if (oldest.lastSequence > summary.lastSequence || messageCount - oldest.lastSequence < limit) break;
    context.write(persistence.agentMessageChunks.instance(messageSequenceKey(oldest.firstSequence)), null);
    index.chunks.shift();
    index.firstSequence = oldest.lastSequence + 1;
    deleted = true;
  }
  return deleted;
}

/**
 * Applies retention to the session as this Step sees it, writing
 * `AgentMessageIndex` only when something was deleted. `CompactContext`
 * calls it after it stored the new summary.
 *
 * @example
 * context.write(persistence.contextSummary, summary);
 * applyRetention(context, environment);
 */
export function applyRetention(context: StepContext, environment: SessionEnvironment): void {
  const { persistence, options } = environment;
  const stored = readMessageIndex(context, persistence);
  const state = context.read(persistence.agentState);
  if (stored === undefined || state === undefined) return;
  const index = copyMessageIndex(stored);
  deleteRetainedChunks(context, persistence, options, index, state.messageCount);
  if (!isSameAgentMessageIndex(stored, index)) context.write(persistence.agentMessageIndex, index);
}
