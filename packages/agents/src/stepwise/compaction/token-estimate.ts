/**
 * Stepwise's token estimate, without a tokenizer: a character count of the
 * JSON the model receives, at 4 characters per token, rounded up. It errs
 * high for English prose and code, which is the safe side for a trigger.
 */
import type { ModelRequest, ModelToolDefinition, StepwiseInputItem } from "../model-client.ts";

/** Characters per estimated token. */
export const estimatedCharactersPerToken = 4;

/** The estimated tokens of `text`. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / estimatedCharactersPerToken);
}

/** The estimated tokens of a stored item (its JSON, with the provider's own message). */
export function estimateItemTokens(item: unknown): number {
  return estimateTextTokens(JSON.stringify(item ?? null));
}

/** The estimated tokens of a model request: instructions, input items and tool definitions. */
export function estimateModelRequestTokens(request: { instructions: string; input: readonly StepwiseInputItem[]; tools: readonly ModelToolDefinition[] }): number {
  let tokens = estimateTextTokens(request.instructions);
  for (const item of request.input) tokens += estimateItemTokens(item);
  for (const tool of request.tools) tokens += estimateTextTokens(JSON.stringify(tool));
  return tokens;
}

/** The estimate of a model client that has its own, else Stepwise's. */
export function estimateInputTokensWith(model: { estimateInputTokens?: (request: ModelRequest) => number }, request: ModelRequest): number {
  return model.estimateInputTokens === undefined ? estimateModelRequestTokens(request) : model.estimateInputTokens(request);
}
