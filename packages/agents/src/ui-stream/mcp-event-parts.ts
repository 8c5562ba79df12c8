/**
 * The parts of the MCP events (docs/decisions/2026-12-03-mcp-events-in-ui-
 * streams.md): `mcp.tool_progress` and `mcp.task_status` show the call's
 * tool part when the stream has not shown it, then the call's progress or
 * task status part, which replaces the previous one in the message.
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { chunk, enterStepOfResponse, showToolCall } from "./agent-event-part-steps.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";
import { mcpTaskStatusChunkFromPayload, mcpToolProgressChunkFromPayload } from "./mcp-data-parts.ts";
import type { PlannedAgentUIPart } from "./planned-agent-ui-part.ts";

/** `mcp.tool_progress` or `mcp.task_status`. False when the payload lacks its fields, so the event travels as a transient `data-agent-event`. */
export function planMcpEvent(state: AgentUIStreamState, event: AgentEvent, parts: PlannedAgentUIPart[]): boolean {
  const part = event.type === "mcp.tool_progress" ? mcpToolProgressChunkFromPayload(event.payload, event.attempt) : mcpTaskStatusChunkFromPayload(event.payload);
  if (part === undefined) return false;
  if (!enterStepOfResponse(state, event, parts)) return true;
  showToolCall(state, part.data.toolCallId, part.data.toolName, parts);
  parts.push(chunk(part));
  return true;
}
