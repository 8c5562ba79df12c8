/**
 * Which chunks a model input needs, chosen when the Step is scheduled: the
 * movement into `RunModel`, `ApplyTurnControl` or `CompactContext` lists
 * the chunks that overlap the messages after `ContextSummary.lastSequence`
 * (every chunk without a summary the runner can use).
 */
import { moveTo, type LoadSelection, type StepContext, type StepDecision } from "@perdure/engine";
import { messageSequenceKey } from "../../contract/values/agent-message.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { chunkHolding, readMessageIndex } from "./message-index-view.ts";

/**
 * Whether model calls start from the summary: only under a compaction
 * policy, which `createAgentSessionFlow` accepts only for a runner with the
 * three compaction methods. `buildTurnContext` applies the same rule.
 */
export function modelInputUsesContextSummary(environment: SessionEnvironment): boolean {
  return environment.options.compaction !== null;
}

/**
 * The first sequence of the model input: the one after the summary when the
 * runner can use it, else 1 (the oldest stored message, once retention
 * deleted earlier ones).
 */
export function modelInputFirstSequence(context: StepContext, environment: SessionEnvironment): number {
  const summary = context.read(environment.persistence.contextSummary);
  return summary !== undefined && modelInputUsesContextSummary(environment) ? summary.lastSequence + 1 : 1;
}

/**
 * The load selection of the chunks the model input overlaps, as the state
 * stands after this Step's writes. It is a key range from the first such
 * chunk, so it also covers any chunk written later, before the Step runs.
 */
export function modelInputLoads(context: StepContext, environment: SessionEnvironment): LoadSelection[] {
  const { agentMessageChunks } = environment.persistence;
  const first = modelInputFirstSequence(context, environment);
  if (first <= 1) return [agentMessageChunks.all()];
  const holding = chunkHolding(readMessageIndex(context, environment.persistence), first);
  return [agentMessageChunks.all({ fromKey: messageSequenceKey(holding?.firstSequence ?? first) })];
}

/**
 * Moves to `RunModel`, `ApplyTurnControl` or `CompactContext` with the
 * chunks of the model input listed in the movement.
 *
 * @example
 * return moveToModelInputStep(context, environment, AgentStepType.RunModel);
 */
export function moveToModelInputStep(context: StepContext, environment: SessionEnvironment, stepType: string, input?: unknown): StepDecision {
  return moveTo(stepType, input, { load: modelInputLoads(context, environment) });
}

/**
 * Throws when a chunk of the model input was not loaded, which would
 * silently drop messages from the model input: some movement into this Step
 * did not list its chunks.
 */
export function requireModelInputLoaded(context: StepContext, environment: SessionEnvironment): void {
  const { persistence } = environment;
  const index = readMessageIndex(context, persistence);
  if (index === undefined) return;
  const first = modelInputFirstSequence(context, environment);
  const loaded = new Set(context.loadedKeys(persistence.agentMessageChunks));
  const missing = index.chunks.find((chunk) => chunk.lastSequence >= first && !loaded.has(messageSequenceKey(chunk.firstSequence)));
  if (missing !== undefined) {
    throw new Error(`${context.stepType} of ${context.flowId} did not load message chunk ${missing.firstSequence}-${missing.lastSequence} of its model input; move into it with moveToModelInputStep`);
  }
}
