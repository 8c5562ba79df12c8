/**
 * A loopback fake of the OpenAI Responses API (`POST /v1/responses`), plain
 * and streamed, for the AI SDK's OpenAI provider (which Mastra uses here)
 * and the OpenAI Agents SDK: a scripted model answers from the last user
 * message and the tool results after it. It runs in the test process, so it
 * outlives a `perdure dev` killed with SIGKILL.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The scripted model: a tool call or a text, from the conversation. */
export type ScriptedReply = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };
export type ReplyScript = (lastUserText: string, toolOutputs: string[]) => ScriptedReply;

type Item = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? (content as { text?: unknown }[]).map((part) => (typeof part.text === "string" ? part.text : "")).join("") : "";
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  return Array.isArray(output) ? textOf(output) : JSON.stringify(output);
}

async function readBody(request: IncomingMessage): Promise<Item> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Item;
}

export class LoopbackOpenAiResponses {
  /** The `/v1/responses` requests answered, oldest first. */
  readonly requests: Item[] = [];
  baseUrl = "";
  private server: Server | undefined;
  private nextId = 1;
  private readonly script: ReplyScript;

  constructor(script: ReplyScript) {
    this.script = script;
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => void this.answer(request, response).catch((error: unknown) => {
      response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: String(error) } }));
    }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** Every tool result the model was sent (`function_call_output` items), across all requests. */
  toolOutputs(): string[] {
    return this.requests.flatMap((body) => (Array.isArray(body.input) ? (body.input as Item[]) : []).filter((item) => item.type === "function_call_output").map((item) => outputText(item.output)));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://fake").pathname;
    const body = await readBody(request);
    if (request.method !== "POST" || path !== "/v1/responses") {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${path}` } }));
      return;
    }
    this.requests.push(body);
    const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : (body.input as Item[]);
    const lastUser = input.findLastIndex((item) => item.role === "user");
    const outputs = input.slice(lastUser + 1).filter((item) => item.type === "function_call_output").map((item) => outputText(item.output));
    const reply = this.script(textOf(input[lastUser]?.content), outputs);
    const number = this.nextId++;
    const item: Item = "text" in reply
      ? { type: "message", id: `msg_${number}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] }
      : { type: "function_call", id: `fc_${number}`, call_id: `call_${number}`, name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments), status: "completed" };
    const usage = { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 60 };
    const header = { id: `resp_${number}`, object: "response", created_at: Math.floor(Date.now() / 1000), model: String(body.model) };
    const completed = { ...header, status: "completed", incomplete_details: null, error: null, output: [item], usage };
    if (body.stream !== true) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completed));
      return;
    }
    const events: Item[] = [
      { type: "response.created", response: { ...header, status: "in_progress", output: [] } },
      { type: "response.output_item.added", output_index: 0, item: item.type === "message" ? { ...item, status: "in_progress", content: [] } : { ...item, arguments: "", status: "in_progress" } },
      item.type === "message"
        ? { type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta: "text" in reply ? reply.text : "" }
        : { type: "response.function_call_arguments.delta", item_id: item.id, output_index: 0, delta: item.arguments },
      { type: "response.output_item.done", output_index: 0, item },
      { type: "response.completed", response: completed },
    ];
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    events.forEach((event, index) => response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`));
    response.end();
  }
}
