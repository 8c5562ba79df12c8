/**
 * The parts of a tool call that ran inside a framework's own loop, in
 * `RunModel` (the Claude Agent SDK's harness runs reads there): it has no
 * tool call record, so its events carry the input and the result, and its
 * parts are ready to send. `harness.tool_call_started` shows the call with
 * its input; `harness.tool_call_finished` its output, or its error text.
 * Both belong to the model step that wrote them, so a rerun of `RunModel`
 * drops them with the rest of the attempt (`reset-step`).
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { chunk, closeOpenParts, enterModelStep, payloadString } from "./agent-event-part-steps.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";
import type { PlannedAgentUIPart } from "./planned-agent-ui-part.ts";

function showInput(state: AgentUIStreamState, toolCallId: string, toolName: string, input: unknown, parts: PlannedAgentUIPart[]): void {
  if (state.shownToolCallIds.includes(toolCallId)) return;
  state.shownToolCallIds.push(toolCallId);
  parts.push(chunk({ type: "tool-input-available", toolCallId, toolName, input, dynamic: true }));
}

/** `harness.tool_call_started` or `harness.tool_call_finished`. False when the payload lacks its fields, so the event travels as a transient `data-agent-event`. */
export function planHarnessToolEvent(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const toolCallId = payloadString(event, "tool_call_id");
  const toolName = payloadString(event, "tool_name");
  if (toolCallId === null || toolName === null) return false;
  if (event.type === "harness.tool_call_finished" && typeof event.payload["output"] !== "string") return false;
  if (!enterModelStep(state, event, parts)) return true;
  closeOpenParts(state, parts);
  const input = event.payload["input"] ?? null;
  showInput(state, toolCallId, toolName, input, parts);
  if (event.type === "harness.tool_call_started") return true;
  const output = event.payload["output"] as string;
  parts.push(chunk(event.payload["is_error"] === true
    ? { type: "tool-output-error", toolCallId, errorText: output, dynamic: true }
    : { type: "tool-output-available", toolCallId, output, dynamic: true }));
  return true;
}
