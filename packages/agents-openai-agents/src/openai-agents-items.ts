/**
 * The OpenAI Agents SDK's input items as stored session messages, and back.
 * A message stores the SDK item unchanged as its `frameworkItem`, so a
 * reload replays it to the model as the SDK produced it.
 */
import type { AgentInputItem } from "@openai/agents";
import type { AgentMessage, FrameworkMessage } from "@perdure/agents";

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { type?: string; text?: string; refusal?: string }) => part.text ?? part.refusal ?? "").join("");
}

/** The text of a function call result's output, as the model sees it. */
function textOfOutput(output: unknown): string {
  if (typeof output === "string") return output;
  if (typeof output === "object" && output !== null && "text" in output && typeof output.text === "string") return output.text;
  return Array.isArray(output) ? textOfContent(output) : JSON.stringify(output ?? null);
}

/** One SDK item as a session message. */
export function messageOfItem(item: AgentInputItem): FrameworkMessage {
  const object = item as { type?: string; role?: string; content?: unknown; callId?: string; name?: string; output?: unknown };
  if (object.type === "function_call") {
    return { role: "assistant", text: "", toolCallId: object.callId ?? "", toolName: object.name ?? "", frameworkItem: item };
  }
  if (object.type === "function_call_result") {
    return { role: "tool", text: textOfOutput(object.output), toolCallId: object.callId ?? "", toolName: object.name ?? "", frameworkItem: item };
  }
  if (object.role === "user" || object.role === "system") return { role: object.role, text: textOfContent(object.content), frameworkItem: item };
  return { role: "assistant", text: textOfContent(object.content), frameworkItem: item };
}

/** The SDK user item of a user text. */
export function userItem(text: string): AgentInputItem {
  return { role: "user", content: text };
}

function looksLikeItem(value: unknown): value is AgentInputItem {
  return typeof value === "object" && value !== null && ("type" in value || "role" in value);
}

/**
 * The model input of stored messages: each SDK item as stored. A message
 * another runner wrote (no SDK item) becomes a user or assistant text; a
 * tool result without its call in SDK form is left out, because the model
 * would refuse a result whose call it never made.
 */
export function itemsOfMessages(messages: readonly AgentMessage[]): AgentInputItem[] {
  return messages.flatMap((message): AgentInputItem[] => {
    if (looksLikeItem(message.frameworkItem)) return [message.frameworkItem];
    if (message.role === "user" || message.role === "system") return [{ role: message.role, content: message.text } as AgentInputItem];
    if (message.role === "assistant" && message.text !== "") {
      return [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: message.text }] }];
    }
    return [];
  });
}
