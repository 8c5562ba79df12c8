import { asWireObject, readBoolean, readString, type WireObject } from "./wire.ts";

/** A user message queued for a turn. */
export interface AgentUserMessage {
  text: string;
  /**
   * Whether the message asks for a plan. Omitted while `false`, so a session
   * that uses no plans decodes to its 0.1.0 shape; the wire always carries
   * `plan_mode`.
   * @default false
   */
  planMode?: boolean;
  sentAt: string;
}

export function agentUserMessageToWire(message: AgentUserMessage): WireObject {
  return { text: message.text, plan_mode: message.planMode ?? false, sent_at: message.sentAt };
}

export function agentUserMessageFromWire(data: unknown): AgentUserMessage {
  const object = asWireObject(data, "AgentUserMessage");
  const message: AgentUserMessage = { text: readString(object, "text", ""), sentAt: readString(object, "sent_at", "") };
  if (readBoolean(object, "plan_mode", false)) message.planMode = true;
  return message;
}

/** One queued message in a snapshot, with the ID that deletes or steers it. */
export interface QueuedAgentUserMessage extends AgentUserMessage {
  messageId: string;
}

/** `ToolCallResults` message: a tool call became final. */
export interface ToolCallCompleted {
  toolCallId: string;
}

export function toolCallCompletedToWire(value: ToolCallCompleted): WireObject {
  return { tool_call_id: value.toolCallId };
}

export function toolCallCompletedFromWire(data: unknown): ToolCallCompleted {
  return { toolCallId: readString(asWireObject(data, "ToolCallCompleted"), "tool_call_id", "") };
}

/** `TurnReplySequence`: where the latest turn's replies start. */
export interface TurnReplySequence {
  turnId: string;
  sequence: number;
}
