/**
 * What a compacted turn changes in Stepwise's model input: the summary note
 * first, and the unstored tool calls picked among the responses the input
 * still holds (a summarized response's results are stored and summarized).
 */
import type { AgentTurnContext } from "../../contract/agent-framework-runner.ts";
import { selectUnstoredToolCalls } from "../../contract/unstored-tool-calls.ts";
import type { AgentToolCall } from "../../contract/values/agent-tool-call.ts";
import type { StepwiseInputItem } from "../model-client.ts";
import { modelOutputToolCallIds } from "./compaction-cut-points.ts";
import { contextSummaryNoteText } from "./context-summary-texts.ts";

/** The user text that starts a compacted model input, or nothing before the first compaction. */
export function contextSummaryItems(turn: Pick<AgentTurnContext, "contextSummary">): StepwiseInputItem[] {
  const summary = turn.contextSummary ?? null;
  return summary === null ? [] : [{ type: "user_text", text: contextSummaryNoteText(summary.summary) }];
}

/**
 * The turn's final calls whose results are not stored yet. After a
 * compaction that summarized part of this turn, `turn.messages` no longer
 * holds the stored results of earlier rounds, so only the calls of model
 * outputs still in `turn.messages` count; the cut never summarizes a
 * response before its results are stored.
 */
export function selectStepwiseUnstoredToolCalls(turn: Pick<AgentTurnContext, "turnId" | "messages" | "toolCalls" | "contextSummary">): AgentToolCall[] {
  const unstored = selectUnstoredToolCalls(turn);
  if ((turn.contextSummary ?? null) === null) return unstored;
  const offered = modelOutputToolCallIds(turn.messages);
  return unstored.filter((call) => offered.has(call.toolCallId));
}
