/**
 * The parts and messages the UI stream produces. They are structural subsets
 * of the AI SDK's `UIMessageChunk` and `UIMessage` types, so this package has
 * no runtime dependency on `ai`; a type test keeps them assignable.
 */
import type { AgentEventType } from "../contract/values/agent-event.ts";
import type { AgentDataChunk } from "../contract/ui-stream/data-parts.ts";

/**
 * Why a UI message stream finished: `stop` (the turn completed), `error` (the
 * turn failed), `tool-calls` (the turn waits only for approvals), or `other`
 * (events were lost, or the turn was steered or cancelled).
 */
export type AgentUIFinishReason = "stop" | "error" | "other" | "tool-calls";

/**
 * An `AgentEvent` as JSON for a browser: the wire field names, with `payload`
 * as JSON text, exactly the contract's `AgentEvent` wire JSON. Plain
 * Server-Sent Events carry it as their data, and the UI message stream
 * carries it in `data-agent-event` parts.
 */
export interface AgentEventJson {
  type: AgentEventType;
  turn_id: string | null;
  attempt: number;
  step_execution_id: string;
  /** The event's payload as JSON text. */
  payload: string;
}

/** The transient part after every other part: where the stream continues after that part. */
export interface AgentResumeTokenChunk {
  type: "data-agent-resume-token";
  /** The resume token; send it back in the `x-agent-resume-token` header. */
  data: string;
  transient: true;
}

/** A transient part carrying an event the table maps to no message part, such as `usage_recorded`. */
export interface AgentEventChunk {
  type: "data-agent-event";
  data: AgentEventJson;
  transient: true;
}

/**
 * One part of an agent UI message stream (protocol
 * `x-vercel-ai-ui-message-stream: v1`). Every variant is also an AI SDK
 * `UIMessageChunk`.
 */
export type AgentUIMessageChunk =
  | { type: "start"; messageId: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "reset-step" }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; dynamic: true }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; dynamic: true }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "error"; errorText: string }
  | { type: "finish"; finishReason: AgentUIFinishReason }
  | AgentDataChunk
  | AgentEventChunk
  | AgentResumeTokenChunk;

/** A granted approval, kept on a tool part once the call has an outcome. */
export interface AgentGrantedApproval {
  id: string;
  approved: true;
  reason?: string;
}

/** A tool call as a message part: always an AI SDK dynamic tool part. */
export type AgentDynamicToolUIPart = {
  type: "dynamic-tool";
  toolName: string;
  toolCallId: string;
} & (
  | { state: "input-available"; input: unknown }
  | { state: "approval-requested"; input: unknown; approval: { id: string } }
  | { state: "approval-responded"; input: unknown; approval: { id: string; approved: boolean; reason?: string } }
  | { state: "output-available"; input: unknown; output: unknown; approval?: AgentGrantedApproval }
  | { state: "output-error"; input: unknown; errorText: string; approval?: AgentGrantedApproval }
  | { state: "output-denied"; input: unknown; approval: { id: string; approved: false; reason?: string } }
);

/** A part of an {@link AgentUIMessage}. */
export type AgentUIMessagePart =
  | { type: "step-start" }
  | { type: "text"; text: string; state?: "streaming" | "done" }
  | { type: "reasoning"; text: string; state?: "streaming" | "done" }
  | AgentDynamicToolUIPart
  | AgentDataChunk;

/**
 * A stored message as an AI SDK `UIMessage`. A turn's replies form one
 * assistant message with the ID `<turnId>-assistant`, the same ID its live
 * stream uses.
 */
export interface AgentUIMessage {
  id: string;
  role: "system" | "user" | "assistant";
  parts: AgentUIMessagePart[];
}
