/**
 * What a scripted reply usually needs from a request: the latest user text
 * and the tool results after it, with the session's tool names.
 */
import type { FakeMessagesContentBlock, FakeMessagesRequest } from "./fake-messages-api.ts";

/** The facts of a request. */
export interface FakeRequestFacts {
  /** The text of the latest user message that has text, without the harness's `<system-reminder>` blocks. */
  lastUserText: string;
  /** The tool results after that message, oldest first, by the tool's session name (no `mcp__perdure__` prefix). */
  turnToolResults: { toolName: string; output: string }[];
  /** User messages with text, for stable tool call IDs. */
  userTextMessages: number;
  /** Assistant messages after the latest user text, plus one. */
  modelCallInTurn: number;
}

function blocksOf(content: string | FakeMessagesContentBlock[]): FakeMessagesContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

function userTextOf(content: string | FakeMessagesContentBlock[]): string {
  return blocksOf(content).filter((block) => block.type === "text" && !(block.text ?? "").startsWith("<system-reminder>")).map((block) => block.text ?? "").join("");
}

function outputText(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? (content as FakeMessagesContentBlock[]).map((block) => block.text ?? "").join("") : "";
}

/** Reads the facts of a request. */
export function readFakeRequest(request: FakeMessagesRequest): FakeRequestFacts {
  const messages = request.messages;
  const lastUserIndex = messages.findLastIndex((message) => message.role === "user" && userTextOf(message.content) !== "");
  const after = messages.slice(lastUserIndex + 1);
  const toolNames = new Map(messages.flatMap((message) => blocksOf(message.content).flatMap((block) => block.type === "tool_use" && block.id !== undefined ? [[block.id, (block.name ?? "").replace(/^mcp__perdure__/, "")] as const] : [])));
  const turnToolResults = after.filter((message) => message.role === "user").flatMap((message) => blocksOf(message.content).flatMap((block) =>
    block.type === "tool_result" ? [{ toolName: toolNames.get(block.tool_use_id ?? "") ?? "", output: outputText(block.content) }] : []));
  return {
    lastUserText: lastUserIndex === -1 ? "" : userTextOf(messages[lastUserIndex]!.content),
    turnToolResults,
    userTextMessages: messages.filter((message) => message.role === "user" && userTextOf(message.content) !== "").length,
    modelCallInTurn: after.filter((message) => message.role === "assistant").length + 1,
  };
}
