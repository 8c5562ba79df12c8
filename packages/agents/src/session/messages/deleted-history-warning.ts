/**
 * The warning for a runner without the compaction methods on a session
 * whose earlier messages retention deleted: its model input starts at the
 * oldest stored message, without the summary of what came before.
 */
import type { StepContext } from "@perdure/engine";
import type { SessionEnvironment } from "../session-environment.ts";
import { modelInputUsesContextSummary } from "./model-input-loads.ts";

/** The warning text; `firstSequence` is the oldest stored message. */
export function deletedHistoryWarning(flowId: string, firstSequence: number): string {
  return `perdure agents: session ${flowId} has no messages before sequence ${firstSequence} (retention deleted them after a summary), `
    + "and its runner has no compaction methods to use the summary, so the model sees the conversation only from that message on";
}

/**
 * Logs {@link deletedHistoryWarning} before a model call whose input cannot
 * start from the summary (no compaction policy, so no runner compaction
 * methods in use) while retention deleted earlier messages. Every model call
 * logs it again.
 */
export function warnWhenHistoryDeleted(context: StepContext, environment: SessionEnvironment): void {
  if (modelInputUsesContextSummary(environment)) return;
  const index = context.read(environment.persistence.agentMessageIndex);
  if (index !== undefined && index.firstSequence > 1) console.warn(deletedHistoryWarning(context.flowId, index.firstSequence));
}
