/**
 * What the event-to-part table plans: parts ready to send, or parts whose
 * content is read from committed state when they are sent.
 */
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import type { AgentUIStreamState } from "./agent-ui-stream-state.ts";

/** A final status of `tool_call_finished` whose part carries the record's result. */
export type AgentToolResultStatus = "succeeded" | "failed" | "outcome_unknown";

/** A part to send: ready, or one whose content comes from the committed tool call record. */
export type PlannedAgentUIPart =
  | { kind: "chunk"; chunk: AgentUIMessageChunk }
  | { kind: "tool-input"; toolCallId: string; toolName: string }
  | { kind: "tool-output"; toolCallId: string; toolName: string; status: AgentToolResultStatus }
  | { kind: "plan"; revision: number; status: string; taskCount: number };

/** The parts of one event and the state after them. */
export interface PlannedEventParts {
  parts: PlannedAgentUIPart[];
  state: AgentUIStreamState;
}

/** A part that stands alone (not derived from one event), with the state after it. */
export interface PlannedStandalonePart {
  part: PlannedAgentUIPart;
  state: AgentUIStreamState;
}

/** A pending approval the browser must see before the stream finishes with `tool-calls`. */
export interface PendingApprovalCall {
  approvalId: string;
  toolCallId: string;
  toolName: string;
}
