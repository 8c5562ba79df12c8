/**
 * The model request of a Stepwise summary call: the earlier summary, the
 * messages to fold in, and the prompt, with `contextSummaryInstructions` and
 * no tools. When it would not fit the context window, the oldest messages
 * are left out, whole responses at a time, and a note says how many.
 */
import type { ContextSummaryRequest } from "../../contract/agent-framework-runner.ts";
import type { ModelRequest, ModelSettings, StepwiseInputItem } from "../model-client.ts";
import { buildModelInput } from "../stepwise-input.ts";
import { compactionCutIndexes } from "./compaction-cut-points.ts";
import { buildContextSummaryOmissionNote, contextSummaryInstructions, contextSummaryNoteText, contextSummaryPrompt } from "./context-summary-texts.ts";

/** A summary call's model request, and how many of the request's messages it left out. */
export interface SummaryModelRequest {
  modelRequest: ModelRequest;
  omittedCount: number;
}

function userText(text: string): StepwiseInputItem {
  return { type: "user_text", text };
}

/**
 * Builds the summary call. `estimate` counts the request's input tokens; the
 * request plus `modelSettings.maxOutputTokens` must fit `request.inputTokenBudget`.
 */
export function buildSummaryModelRequest(
  request: ContextSummaryRequest,
  modelSettings: ModelSettings | undefined,
  estimate: (modelRequest: ModelRequest) => number,
): SummaryModelRequest {
  const head = request.previousSummary === null ? [] : [userText(contextSummaryNoteText(request.previousSummary.summary))];
  const build = (start: number): ModelRequest => ({
    flowId: request.flowId,
    turnId: request.turnId,
    attempt: request.attempt,
    instructions: contextSummaryInstructions,
    input: [
      ...head,
      ...(start === 0 ? [] : [userText(buildContextSummaryOmissionNote(start))]),
      ...buildModelInput(request.messages.slice(start).map((message) => message.frameworkItem)),
      userText(contextSummaryPrompt),
    ],
    tools: [],
    modelSettings,
    events: request.events,
    signal: request.cancellationSignal,
  });
  const outputTokens = modelSettings?.maxOutputTokens ?? 0;
  const fits = (modelRequest: ModelRequest): boolean => estimate(modelRequest) + outputTokens <= request.inputTokenBudget;
  const whole = build(0);
  if (fits(whole)) return { modelRequest: whole, omittedCount: 0 };
  const cuts = compactionCutIndexes(request.messages);
  for (const cut of cuts) {
    const shortened = build(cut + 1);
    if (fits(shortened)) return { modelRequest: shortened, omittedCount: cut + 1 };
  }
  // Nothing short enough keeps a response whole: send the shortest allowed request and let the provider decide.
  const last = cuts.at(-1);
  return last === undefined ? { modelRequest: whole, omittedCount: 0 } : { modelRequest: build(last + 1), omittedCount: last + 1 };
}
