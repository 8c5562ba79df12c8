import { asWireObject, compact, readNullableString, readNumber, readString, type WireObject } from "./wire.ts";

/** Who a stored message is from. */
export type AgentMessageRole = "user" | "assistant" | "tool" | "system";

/** A message as a runner builds it, before the session numbers and stores it. */
export interface FrameworkMessage {
  role: AgentMessageRole;
  /** Text a person reads (the UI shows it); may be empty for a tool request. */
  text: string;
  /** The framework's own item, stored and replayed unchanged; JSON. */
  frameworkItem: unknown;
  /** Set on tool results. */
  toolCallId?: string;
  toolName?: string;
}

/** A stored message of a session. Sequences start at 1 and have no gaps. */
export interface AgentMessage extends FrameworkMessage {
  sequence: number;
  /** The turn that stored it, or null. */
  turnId: string | null;
  /** ISO 8601 time the message was stored. */
  createdAt: string;
}

/** The AttributeMap key of a message: its sequence, 12 digits zero-padded. */
export function messageSequenceKey(sequence: number): string {
  if (!Number.isSafeInteger(sequence) || sequence < 1 || sequence > 999_999_999_999) {
    throw new RangeError(`message sequence ${String(sequence)} is invalid: use an integer from 1 to 999999999999`);
  }
  return String(sequence).padStart(12, "0");
}

const roles: readonly AgentMessageRole[] = ["user", "assistant", "tool", "system"];

export function agentMessageToWire(message: AgentMessage): WireObject {
  return compact({
    sequence: message.sequence,
    role: message.role,
    text: message.text,
    turn_id: message.turnId,
    created_at: message.createdAt,
    tool_call_id: message.toolCallId,
    tool_name: message.toolName,
    framework_item: message.frameworkItem,
  });
}

export function agentMessageFromWire(data: unknown): AgentMessage {
  const object = asWireObject(data, "AgentMessage");
  const role = readString(object, "role", "user");
  const message: AgentMessage = {
    sequence: readNumber(object, "sequence", 0),
    role: (roles as readonly string[]).includes(role) ? (role as AgentMessageRole) : "user",
    text: readString(object, "text", ""),
    turnId: readNullableString(object, "turn_id"),
    createdAt: readString(object, "created_at", ""),
    frameworkItem: object.framework_item ?? null,
  };
  const toolCallId = readNullableString(object, "tool_call_id");
  const toolName = readNullableString(object, "tool_name");
  if (toolCallId !== null) message.toolCallId = toolCallId;
  if (toolName !== null) message.toolName = toolName;
  return message;
}
