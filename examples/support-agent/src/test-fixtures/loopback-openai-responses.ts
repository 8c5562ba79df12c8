/**
 * A loopback fake of the OpenAI Responses API (`POST /v1/responses`,
 * streamed), enough for `@ai-sdk/openai`: reasoning, text and function call
 * items, stored items that `item_reference` can name, encrypted reasoning
 * when the request includes it, and the refusals of the real API for a
 * reference to an item it does not have, reasoning it cannot verify, and a
 * tool output without its call.
 */
import type { ServerResponse } from "node:http";
import { deltasOf, FakeRequestError, LoopbackProvider, writeEventStream, type FakeConversation } from "./loopback-provider.ts";

type InputItem = Record<string, unknown>;

export class LoopbackOpenAiResponses extends LoopbackProvider {
  /** Output items kept for `item_reference`, by ID; only requests without `store: false` add to it. */
  private readonly storedItems = new Map<string, InputItem>();
  private readonly issuedEncryptedReasoning = new Set<string>();
  private nextId = 1;

  /** Forgets every stored item, as a provider does when they expire or are deleted. */
  forgetStoredItems(): void {
    this.storedItems.clear();
  }

  /** How many items a reference could name today. */
  get storedItemCount(): number {
    return this.storedItems.size;
  }

  protected handle(path: string, body: Record<string, unknown>, response: ServerResponse): void {
    if (path !== "/v1/responses") throw new FakeRequestError(404, { error: { message: `no route ${path}`, type: "invalid_request_error" } });
    const conversation = this.readConversation(body);
    const reply = this.reply(conversation);
    const number = this.nextId++;
    const includesEncryptedReasoning = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
    const reasoning: InputItem = { type: "reasoning", id: `rs_${number}`, summary: [], ...(includesEncryptedReasoning ? { encrypted_content: `sealed:rs_${number}` } : {}) };
    if (includesEncryptedReasoning) this.issuedEncryptedReasoning.add(`sealed:rs_${number}`);
    const answer: InputItem =
      "text" in reply
        ? { type: "message", id: `msg_${number}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] }
        : { type: "function_call", id: `fc_${number}`, call_id: `call_${number}`, name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments), status: "completed" };
    if (body.store !== false) {
      this.storedItems.set(reasoning.id as string, reasoning);
      this.storedItems.set(answer.id as string, answer);
    }
    const responseHeader = { id: `resp_${number}`, object: "response", created_at: Math.floor(Date.now() / 1000), model: String(body.model) };
    const events: [string, Record<string, unknown>][] = [
      ["response.created", { type: "response.created", response: { ...responseHeader, status: "in_progress" } }],
      ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item: reasoning }],
      ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item: reasoning }],
    ];
    if (answer.type === "message") {
      const text = (answer.content as { text: string }[])[0]?.text ?? "";
      events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 1, item: { ...answer, status: "in_progress", content: [] } }]);
      for (const delta of deltasOf(text)) {
        events.push(["response.output_text.delta", { type: "response.output_text.delta", item_id: answer.id, output_index: 1, content_index: 0, delta }]);
      }
    } else {
      events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 1, item: { ...answer, arguments: "", status: "in_progress" } }]);
      events.push(["response.function_call_arguments.delta", { type: "response.function_call_arguments.delta", item_id: answer.id, output_index: 1, delta: answer.arguments }]);
    }
    events.push(["response.output_item.done", { type: "response.output_item.done", output_index: 1, item: answer }]);
    const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 8 }, total_tokens: 120 };
    events.push(["response.completed", { type: "response.completed", response: { ...responseHeader, status: "completed", incomplete_details: null, usage } }]);
    writeEventStream(response, events);
  }

  /** Reads the request's input as the real API would, refusing what it refuses. */
  private readConversation(body: Record<string, unknown>): FakeConversation {
    if (!Array.isArray(body.input)) throw new FakeRequestError(400, { error: { message: "input must be an array", type: "invalid_request_error", param: "input" } });
    const conversation: FakeConversation = { lastUserText: "", toolResults: [], toolNames: [] };
    const callNames = new Map<string, string>();
    for (const raw of body.input as InputItem[]) {
      const item = raw.type === "item_reference" ? this.resolveReference(String(raw.id)) : raw;
      if (item.type === "reasoning") this.checkReasoning(item);
      else if (item.type === "function_call") callNames.set(String(item.call_id), String(item.name));
      else if (item.type === "function_call_output") {
        const toolName = callNames.get(String(item.call_id));
        if (toolName === undefined) {
          throw new FakeRequestError(400, { error: { message: `No tool call found for function call output with call_id ${String(item.call_id)}.`, type: "invalid_request_error", param: "input" } });
        }
        conversation.toolResults.push({ toolName, output: String(item.output) });
      } else if (item.role === "user") {
        conversation.lastUserText = textOf(item.content);
        conversation.toolResults = [];
      }
    }
    conversation.toolNames = Array.isArray(body.tools) ? (body.tools as { name?: unknown }[]).map((tool) => String(tool.name)) : [];
    return conversation;
  }

  private resolveReference(id: string): InputItem {
    const item = this.storedItems.get(id);
    if (item === undefined) throw new FakeRequestError(404, { error: { message: `Item with id '${id}' not found.`, type: "invalid_request_error", param: "input", code: null } });
    return item;
  }

  private checkReasoning(item: InputItem): void {
    const sealed = item.encrypted_content;
    if (typeof sealed === "string" && this.issuedEncryptedReasoning.has(sealed)) return;
    if (typeof item.id === "string" && this.storedItems.has(item.id) && sealed === undefined) return;
    throw new FakeRequestError(400, { error: { message: `The encrypted content of reasoning item ${String(item.id)} could not be verified.`, type: "invalid_request_error", param: "input" } });
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as { text?: unknown }[]).map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}
