/**
 * Session messages in the form Mastra hands to its model: AI SDK model
 * messages, as Mastra's `response.messages` returns them. A message stores
 * its model message unchanged as its `frameworkItem`, so the next call
 * replays it as Mastra produced it.
 */
import type { AgentMessage, AgentToolCall, FrameworkMessage } from "@perdure/agents";

/** One AI SDK model message, as far as the adapter reads it. */
export interface MastraModelMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | readonly { type: string; text?: string; toolCallId?: string; toolName?: string }[];
}

function isModelMessage(value: unknown): value is MastraModelMessage {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  return (role === "system" || role === "user" || role === "assistant" || role === "tool") && (typeof content === "string" || Array.isArray(content));
}

/** The text parts of a message, joined. */
export function textOfModelMessage(message: MastraModelMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => (part.type === "text" ? part.text ?? "" : "")).join("");
}

/** The session message of a user's text. */
export function userMessage(text: string): FrameworkMessage {
  return { role: "user", text, frameworkItem: { role: "user", content: text } satisfies MastraModelMessage };
}

/** The session message of one model response: its text (empty for a tool request only) and the model message as Mastra returned it. */
export function assistantMessage(message: MastraModelMessage): FrameworkMessage {
  return { role: "assistant", text: textOfModelMessage(message), frameworkItem: message };
}

/** The session message of a final tool call: its recorded output as the tool result the model reads. */
export function toolResultMessage(call: AgentToolCall, output: string): FrameworkMessage {
  return {
    role: "tool",
    text: output,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    frameworkItem: {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: { type: "text", value: output } }],
    },
  };
}

/**
 * The model input of stored messages: each stored model message unchanged.
 * A message another runner wrote (no model message) becomes a user or
 * assistant text; a tool result without its call in this form is left out,
 * because a provider refuses a result whose call the model never made.
 */
export function modelMessagesOf(messages: readonly AgentMessage[]): MastraModelMessage[] {
  return messages.flatMap((message): MastraModelMessage[] => {
    if (isModelMessage(message.frameworkItem)) return [message.frameworkItem];
    if (message.role === "user" || message.role === "system") return [{ role: message.role, content: message.text }];
    if (message.role === "assistant" && message.text !== "") return [{ role: "assistant", content: [{ type: "text", text: message.text }] }];
    return [];
  });
}
