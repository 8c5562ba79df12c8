/**
 * The Stepwise model input from stored items, with every tool call paired
 * with a result, so no provider sees an orphaned call.
 */
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";
import type { ModelOutputItem, StepwiseInputItem } from "./model-client.ts";

export function isInputItem(value: unknown): value is StepwiseInputItem {
  const type = (value as { type?: unknown } | null)?.type;
  return type === "user_text" || type === "model_output" || type === "tool_result";
}

/**
 * The model input from stored items only. Every tool call of a model output
 * is paired with a result before the next model output or user text; a
 * missing one gets the outcome-unknown text, so no provider sees an orphan.
 */
export function buildModelInput(items: readonly unknown[]): StepwiseInputItem[] {
  const input: StepwiseInputItem[] = [];
  let open: ModelOutputItem["tool_calls"] = [];
  const answered = new Set<string>();
  const closeOpenCalls = (): void => {
    for (const call of open) {
      if (!answered.has(call.id)) input.push({ type: "tool_result", tool_call_id: call.id, tool_name: call.name, output: outcomeUnknownToolResult });
    }
    open = [];
    answered.clear();
  };
  for (const item of items) {
    if (!isInputItem(item)) continue;
    if (item.type === "tool_result") {
      answered.add(item.tool_call_id);
      input.push(item);
      continue;
    }
    closeOpenCalls();
    input.push(item);
    if (item.type === "model_output") open = item.tool_calls ?? [];
  }
  closeOpenCalls();
  return input;
}

