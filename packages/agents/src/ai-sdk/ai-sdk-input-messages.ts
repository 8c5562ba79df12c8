/**
 * Turns the Stepwise model input, exactly as stored, into AI SDK
 * `ModelMessage`s for one `streamText` call.
 */
import type { AssistantContent, AssistantModelMessage, ModelMessage, ToolCallPart, ToolModelMessage } from "ai";
import type { ModelOutputItem, StepwiseInputItem } from "../stepwise/model-client.ts";
import { outcomeUnknownToolResult } from "../contract/values/result-texts.ts";

/** Who a stored model output must come from to be replayed unchanged. */
export interface ReplayIdentity {
  provider: string;
  api: string;
}

/**
 * Converts the stored input items, oldest first, into AI SDK messages.
 *
 * - `user_text` becomes a user message.
 * - `model_output` with this client's `provider` and `api` becomes its stored
 *   `item`, the AI SDK assistant message, unchanged, so reasoning signatures
 *   and encrypted reasoning go back to the provider that made them. Any other
 *   `model_output` becomes an assistant message with only its text and tool
 *   calls.
 * - `tool_result` becomes a tool message with a text output.
 *
 * Every tool call is answered before the next message: a call with no stored
 * result gets the outcome-unknown text, and a result that answers no open
 * call is left out, because providers reject both. The Stepwise runner
 * already pairs them; this keeps a hand-built input from failing the call.
 */
export function toAiSdkMessages(items: readonly StepwiseInputItem[], identity: ReplayIdentity): ModelMessage[] {
  const messages: ModelMessage[] = [];
  // Tool calls of the latest assistant message still waiting for a result, by ID.
  let openToolCalls = new Map<string, string>();
  const answerOpenToolCalls = (): void => {
    if (openToolCalls.size === 0) return;
    messages.push(toolMessage([...openToolCalls].map(([toolCallId, toolName]) => ({ toolCallId, toolName, output: outcomeUnknownToolResult }))));
    openToolCalls = new Map();
  };
  for (const item of items) {
    switch (item.type) {
      case "user_text":
        answerOpenToolCalls();
        messages.push({ role: "user", content: item.text });
        break;
      case "model_output": {
        answerOpenToolCalls();
        const message = assistantMessageOf(item, identity);
        if (message === undefined) break;
        messages.push(message);
        openToolCalls = new Map(clientToolCallsOf(message).map((part) => [part.toolCallId, part.toolName]));
        break;
      }
      case "tool_result":
        if (!openToolCalls.delete(item.tool_call_id)) break;
        messages.push(toolMessage([{ toolCallId: item.tool_call_id, toolName: item.tool_name, output: item.output }]));
        break;
    }
  }
  answerOpenToolCalls();
  return messages;
}

/** The assistant message to send for a stored output, or `undefined` when it has no content. */
function assistantMessageOf(item: ModelOutputItem, identity: ReplayIdentity): AssistantModelMessage | undefined {
  const storedMessage = item.provider === identity.provider && item.api === identity.api ? storedAssistantMessage(item.item) : undefined;
  const message = storedMessage ?? portableAssistantMessage(item);
  // Providers reject an assistant message without content, such as a stored empty response.
  return message.content.length === 0 ? undefined : message;
}

/** Text and tool calls only: what any provider accepts from another provider's output. */
function portableAssistantMessage(item: ModelOutputItem): AssistantModelMessage {
  const content: Exclude<AssistantContent, string> = [];
  // Read defensively: the item comes from storage, possibly written by another version.
  const text = item.text ?? "";
  if (text !== "") content.push({ type: "text", text });
  for (const call of item.tool_calls ?? []) {
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: parseToolArguments(call.arguments) });
  }
  return { role: "assistant", content };
}

/**
 * The parsed arguments. Text that is not JSON becomes `{}`, as the AI SDK
 * stores an invalid tool call's input; the tool result already says why the
 * call failed.
 */
function parseToolArguments(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText) as unknown;
  } catch {
    return {};
  }
}

/** The tool calls the client runs: provider-executed calls carry their own results. */
function clientToolCallsOf(message: AssistantModelMessage): ToolCallPart[] {
  if (typeof message.content === "string") return [];
  return message.content.filter((part): part is ToolCallPart => part.type === "tool-call" && part.providerExecuted !== true);
}

function toolMessage(results: { toolCallId: string; toolName: string; output: string }[]): ToolModelMessage {
  return {
    role: "tool",
    content: results.map((result) => ({
      type: "tool-result",
      toolCallId: result.toolCallId,
      toolName: result.toolName,
      output: { type: "text", value: result.output },
    })),
  };
}

/**
 * The assistant message this client stored, as the parsed JSON value or as
 * JSON text; `undefined` for anything else, which then replays portably.
 */
function storedAssistantMessage(stored: unknown): AssistantModelMessage | undefined {
  let value = stored;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const candidate = value as { role?: unknown; content?: unknown };
  const isAssistantMessage = candidate.role === "assistant" && (typeof candidate.content === "string" || Array.isArray(candidate.content));
  return isAssistantMessage ? (value as AssistantModelMessage) : undefined;
}
