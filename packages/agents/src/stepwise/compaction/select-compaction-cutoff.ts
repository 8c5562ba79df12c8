/**
 * Stepwise's `selectCompactionCutoff`: the earliest allowed cut whose later
 * messages fit the retained token budget, or the latest allowed cut when
 * none does.
 */
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import { compactionCutIndexes } from "./compaction-cut-points.ts";
import { estimateItemTokens } from "./token-estimate.ts";

/** The sequence of the last message to summarize, or null when no cut is allowed. */
export function selectStepwiseCompactionCutoff(messages: readonly AgentMessage[], retainedTokenBudget: number): number | null {
  const cuts = compactionCutIndexes(messages);
  if (cuts.length === 0) return null;
  // retained[i]: the estimated tokens of messages[i..].
  const retained = new Array<number>(messages.length + 1).fill(0);
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    retained[index] = (retained[index + 1] ?? 0) + estimateItemTokens(messages[index]?.frameworkItem);
  }
  const chosen = cuts.find((index) => (retained[index + 1] ?? 0) <= retainedTokenBudget) ?? (cuts.at(-1) as number);
  return (messages[chosen] as AgentMessage).sequence;
}
