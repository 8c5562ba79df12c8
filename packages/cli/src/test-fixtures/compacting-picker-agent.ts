/**
 * An entry module for the `perdure dev` browser test of the model picker and
 * the inspector's storage panels: a Stepwise agent with two scripted models
 * (`demo-small`, the default, and `demo-large`) that each answer with their
 * own name, a compaction policy that summarizes every few turns, and a
 * message window, chunk size and retention small enough that a handful of
 * turns archives chunks and deletes the oldest.
 */
import { createAgentSessionFlow } from "@perdure/agents";
import { contextSummaryInstructions, ScriptedModelClient, StepwiseAgentRunner, type ModelClient } from "@perdure/agents/stepwise";

/** Text each answer repeats, so a few turns reach the small context window. */
export const pickerAnswerFiller = "The parcel left the warehouse this morning and the refund follows once it is back.";

function scriptedModel(name: string): ModelClient {
  return new ScriptedModelClient((request) => (request.instructions === contextSummaryInstructions
    ? { text: `${name} summary of ${request.input.length} items` }
    : { text: `${name} answers: ${pickerAnswerFiller}` }), { provider: name });
}

const models: Record<string, ModelClient> = { "demo-small": scriptedModel("demo-small"), "demo-large": scriptedModel("demo-large") };
const defaultModel = models["demo-small"] as ModelClient;

const runner = new StepwiseAgentRunner({
  name: "picker",
  instructions: "Answer the customer.",
  model: defaultModel,
  modelChoices: Object.keys(models),
  resolveModel: (settings) => (Object.hasOwn(models, String(settings.model)) ? models[String(settings.model)] : undefined) ?? defaultModel,
});

/** The hosted agent: compaction at 85% of 400 tokens, a window of 8, chunks of 4, and 12 retained messages. */
export const compactingPickerAgentFlow = createAgentSessionFlow(runner, "CompactingPickerAgent", {
  compaction: { contextWindowTokens: 400 },
  messageWindowSize: 8,
  messageChunkSize: 4,
  retainedMessageLimit: 12,
});
