/**
 * `RunModel`'s compaction check: before each model call under a compaction
 * policy, the runner estimates the input; at the policy's trigger it picks
 * the last message to summarize, and `RunModel` moves to `CompactContext`.
 */
import { TerminalError, type ExecuteContext, type StepDecision } from "@perdure/engine";
import type { AgentTurnContext } from "../../contract/agent-framework-runner.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { AgentStepType } from "../step-types.ts";
import { moveToModelInputStep } from "../messages/model-input-loads.ts";

/** The input of the `CompactContext` Step: the last message sequence to summarize (`{ "through_sequence" }` on the wire, as in `compaction_started`). */
export interface CompactContextInput {
  throughSequence: number;
}

export function compactContextInputToWire(input: CompactContextInput): { through_sequence: number } {
  return { through_sequence: input.throughSequence };
}

export function compactContextInputFromWire(data: unknown): CompactContextInput {
  const value = (typeof data === "object" && data !== null ? (data as Record<string, unknown>).through_sequence : undefined);
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new TerminalError(`CompactContext input ${JSON.stringify(data)} is invalid: it needs a positive integer through_sequence`);
  }
  return { throughSequence: value };
}

/**
 * The sequence `CompactContext` should summarize through before this model
 * call, or null to call the model now: no policy, an input under the
 * trigger, or a cutoff the current summary already covers.
 */
export async function compactionThroughSequence(environment: SessionEnvironment, turn: AgentTurnContext, state: AgentState): Promise<number | null> {
  const { runner, options } = environment;
  const policy = options.compaction;
  if (policy === null || runner.estimateInputTokens === undefined || runner.selectCompactionCutoff === undefined) return null;
  const estimate = await runner.estimateInputTokens(turn);
  if (typeof estimate !== "number" || !Number.isFinite(estimate) || estimate < 0) {
    throw new TerminalError(`estimateInputTokens returned ${JSON.stringify(estimate)}; return a token count of zero or more`);
  }
  if (estimate < policy.contextWindowTokens * policy.triggerRatio) return null;
  const retainedTokenBudget = Math.floor(policy.contextWindowTokens * policy.retainedRatio);
  const cutoff = await runner.selectCompactionCutoff(turn, retainedTokenBudget);
  if (cutoff === null || cutoff === undefined) return null;
  if (!Number.isSafeInteger(cutoff) || cutoff > state.messageCount) {
    throw new TerminalError(`selectCompactionCutoff returned ${JSON.stringify(cutoff)}; return the sequence of a stored message (at most ${state.messageCount}) or null`);
  }
  return cutoff > (turn.contextSummary?.lastSequence ?? 0) ? cutoff : null;
}

/** Sets status `compacting_context` and moves to `CompactContext`, in `RunModel`'s commit. */
export function startCompaction(context: ExecuteContext, environment: SessionEnvironment, state: AgentState, throughSequence: number): StepDecision {
  context.write(environment.persistence.agentState, { ...state, status: "compacting_context" });
  return moveToModelInputStep(context, environment, AgentStepType.CompactContext, compactContextInputToWire({ throughSequence }));
}
