/**
 * Where Stepwise may cut a transcript: only between whole model responses,
 * after every tool call of the responses before the cut has its stored
 * result, so a call is never separated from its result.
 */
import type { AgentMessage } from "../../contract/values/agent-message.ts";
import type { ModelOutputItem } from "../model-client.ts";

function itemOf(message: AgentMessage): { type?: unknown } {
  const item = message.frameworkItem;
  return typeof item === "object" && item !== null ? (item as { type?: unknown }) : {};
}

/**
 * The indexes `i` after which `messages` may be cut: every tool call of a
 * model output at or before `i` has its result at or before `i`, and
 * `messages[i + 1]` is not a tool result. The last index is never one, so a
 * cut keeps at least one message.
 */
export function compactionCutIndexes(messages: readonly AgentMessage[]): number[] {
  const cuts: number[] = [];
  const open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    const item = itemOf(message);
    if (item.type === "model_output") {
      for (const call of (item as ModelOutputItem).tool_calls ?? []) open.add(call.id);
    } else if (item.type === "tool_result") {
      open.delete((item as { tool_call_id?: string }).tool_call_id ?? "");
    }
    const next = messages[index + 1];
    if (next === undefined) break;
    if (open.size === 0 && itemOf(next).type !== "tool_result") cuts.push(index);
  }
  return cuts;
}

/** The tool call IDs of the model outputs among `messages`. */
export function modelOutputToolCallIds(messages: readonly AgentMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    const item = itemOf(message);
    if (item.type === "model_output") for (const call of (item as ModelOutputItem).tool_calls ?? []) ids.add(call.id);
  }
  return ids;
}
