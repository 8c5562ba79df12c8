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
  /**
   * The ID the client gave the message (a `useChat` message ID), kept as the
   * stored user message's UI ID. A Perdure extension: stored with the queued
   * message, never in the contract's wire forms.
   * @default none
   */
  clientMessageId?: string;
}

/** The contract's wire form: text, plan mode and time, without our extensions. */
export function agentUserMessageToWire(message: AgentUserMessage): WireObject {
  return { text: message.text, plan_mode: message.planMode ?? false, sent_at: message.sentAt };
}

/** The stored form of a queued or steered message: the wire form and, when set, `client_message_id`. */
export function storedAgentUserMessageToWire(message: AgentUserMessage): WireObject {
  const wire = agentUserMessageToWire(message);
  return message.clientMessageId === undefined ? wire : { ...wire, client_message_id: message.clientMessageId };
}

export function agentUserMessageFromWire(data: unknown): AgentUserMessage {
  const object = asWireObject(data, "AgentUserMessage");
  const message: AgentUserMessage = { text: readString(object, "text", ""), sentAt: readString(object, "sent_at", "") };
  if (readBoolean(object, "plan_mode", false)) message.planMode = true;
  if (typeof object.client_message_id === "string") message.clientMessageId = object.client_message_id;
  return message;
}

/** The longest `clientMessageId` a session keeps. */
export const maxClientMessageIdLength = 128;

/**
 * A `clientMessageId` as the session takes it: undefined stays undefined; a
 * string of 1 to {@link maxClientMessageIdLength} characters without control
 * characters is kept; anything else is a `TypeError` naming the value.
 */
export function checkClientMessageId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== "string" || value.length === 0 || value.length > maxClientMessageIdLength || /[\u0000-\u001f\u007f]/.test(value)) {
    const shown = typeof value === "string" ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : typeof value;
    throw new TypeError(`clientMessageId ${shown} is invalid: use 1 to ${maxClientMessageIdLength} characters without control characters`);
  }
  return value;
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
