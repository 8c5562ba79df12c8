/**
 * A loopback fake of the Anthropic Messages API (`POST /v1/messages`,
 * streamed), enough for `@ai-sdk/anthropic`: text and `tool_use` blocks,
 * and the real API's refusal of a `tool_result` that does not answer a
 * `tool_use` of the message just before it, or a `tool_use` left unanswered.
 */
import type { ServerResponse } from "node:http";
import { deltasOf, FakeRequestError, LoopbackProvider, writeEventStream, type FakeConversation } from "./loopback-provider.ts";

type ContentBlock = Record<string, unknown>;

export class LoopbackAnthropicMessages extends LoopbackProvider {
  private nextId = 1;

  protected handle(path: string, body: Record<string, unknown>, response: ServerResponse): void {
    if (path !== "/v1/messages") throw new FakeRequestError(404, { type: "error", error: { type: "not_found_error", message: `no route ${path}` } });
    const conversation = readConversation(body);
    const reply = this.reply(conversation);
    const number = this.nextId++;
    const events: [string, Record<string, unknown>][] = [
      [
        "message_start",
        {
          type: "message_start",
          message: { id: `msg_${number}`, type: "message", role: "assistant", model: String(body.model), content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } },
        },
      ],
    ];
    if ("text" in reply) {
      events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]);
      for (const text of deltasOf(reply.text)) events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }]);
    } else {
      events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: `toolu_${number}`, name: reply.toolCall.name, input: {} } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.toolCall.arguments) } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
    events.push(["message_delta", { type: "message_delta", delta: { stop_reason: "text" in reply ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 20 } }]);
    events.push(["message_stop", { type: "message_stop" }]);
    writeEventStream(response, events);
  }
}

function invalid(message: string): FakeRequestError {
  return new FakeRequestError(400, { type: "error", error: { type: "invalid_request_error", message } });
}

function readConversation(body: Record<string, unknown>): FakeConversation {
  if (!Array.isArray(body.messages)) throw invalid("messages: Field required");
  const conversation: FakeConversation = { lastUserText: "", toolResults: [], toolNames: [] };
  let openToolUses = new Map<string, string>();
  for (const message of body.messages as { role?: unknown; content?: unknown }[]) {
    const blocks: ContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : ((message.content ?? []) as ContentBlock[]);
    if (message.role === "assistant") {
      if (openToolUses.size > 0) throw invalid(`tool_use ids were found without tool_result blocks immediately after: ${[...openToolUses.keys()].join(", ")}`);
      openToolUses = new Map(blocks.filter((block) => block.type === "tool_use").map((block) => [String(block.id), String(block.name)]));
      continue;
    }
    const results = blocks.filter((block) => block.type === "tool_result");
    for (const result of results) {
      const toolName = openToolUses.get(String(result.tool_use_id));
      if (toolName === undefined) throw invalid(`unexpected tool_use_id found in tool_result blocks: ${String(result.tool_use_id)}`);
      openToolUses.delete(String(result.tool_use_id));
      conversation.toolResults.push({ toolName, output: textOf(result.content) });
    }
    if (openToolUses.size > 0) throw invalid(`tool_use ids were found without tool_result blocks immediately after: ${[...openToolUses.keys()].join(", ")}`);
    const text = blocks.filter((block) => block.type === "text").map((block) => String(block.text)).join("");
    if (results.length === 0) {
      conversation.lastUserText = text;
      conversation.toolResults = [];
    }
  }
  conversation.toolNames = Array.isArray(body.tools) ? (body.tools as { name?: unknown }[]).map((tool) => String(tool.name)) : [];
  return conversation;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as { text?: unknown }[]).map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}
