/**
 * Message content on spans, built from the message projections when
 * `shouldCaptureMessageContent` is on: `gen_ai.input.messages` and
 * `gen_ai.output.messages` as the GenAI conventions' JSON message lists.
 */
import type { DeferredToolCall } from "../contract/agent-framework-runner.ts";
import type { FrameworkMessage } from "../contract/values/agent-message.ts";

interface ContentPart {
  type: "text" | "tool_call" | "tool_call_response";
  content?: string;
  id?: string;
  name?: string;
  arguments?: unknown;
  response?: string;
}

interface ContentMessage {
  role: string;
  parts: ContentPart[];
  finish_reason?: string;
}

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function contentMessage(message: FrameworkMessage): ContentMessage {
  if (message.role === "tool") {
    return { role: "tool", parts: [{ type: "tool_call_response", ...(message.toolCallId === undefined ? {} : { id: message.toolCallId }), response: message.text }] };
  }
  return { role: message.role, parts: message.text === "" ? [] : [{ type: "text", content: message.text }] };
}

/** `gen_ai.input.messages`: what the model call was given. */
export function inputMessagesContent(messages: readonly FrameworkMessage[]): string {
  return JSON.stringify(messages.map(contentMessage));
}

/** The assistant texts of the messages a model call produced. */
export function assistantTextsOf(messages: readonly FrameworkMessage[]): string[] {
  return messages.filter((message) => message.role === "assistant").map((message) => message.text);
}

/** `gen_ai.output.messages`: the assistant text of the call (its messages', or a summary's) and the tool calls it requested. */
export function outputMessagesContent(assistantTexts: readonly string[], toolCalls: readonly DeferredToolCall[], finishReason: string | undefined): string {
  const text = assistantTexts.filter((part) => part !== "").join("\n");
  const parts: ContentPart[] = [
    ...(text === "" ? [] : [{ type: "text" as const, content: text }]),
    ...toolCalls.map((call) => ({ type: "tool_call" as const, id: call.toolCallId, name: call.toolName, arguments: parsedArguments(call.arguments) })),
  ];
  return JSON.stringify([{ role: "assistant", parts, ...(finishReason === undefined ? {} : { finish_reason: finishReason }) }]);
}
