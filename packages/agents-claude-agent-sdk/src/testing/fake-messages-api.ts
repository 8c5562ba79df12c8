/**
 * A loopback fake of the Anthropic Messages API, for running the Claude
 * Code harness without a key or a network: point the harness at it with
 * `ANTHROPIC_BASE_URL` and script each reply. It streams replies as the API
 * does (server-sent events) and records every request it answered.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A content block of a Messages API message, as far as the fake reads it. */
export interface FakeMessagesContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
}

/** A request the harness sent to `POST /v1/messages`. */
export interface FakeMessagesRequest {
  model: string;
  system?: unknown;
  messages: { role: string; content: string | FakeMessagesContentBlock[] }[];
  tools?: { name: string }[];
}

/** One scripted reply: text, one tool call, or an API error. */
export type FakeMessagesReply =
  | { kind: "text"; text: string }
  | { kind: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { kind: "error"; status: number; message: string };

/** Makes the reply to a request; `signal` aborts when the harness drops the connection. A script that throws answers 500 with its message. */
export type FakeMessagesScript = (request: FakeMessagesRequest, signal: AbortSignal) => Promise<FakeMessagesReply>;

/** A running fake; `close()` stops it. */
export interface FakeMessagesApi {
  /** The base URL to give the harness as `ANTHROPIC_BASE_URL`. */
  url: string;
  /** The `POST /v1/messages` requests answered so far, oldest first. */
  requests: FakeMessagesRequest[];
  close(): Promise<void>;
}

function sendEvent(response: ServerResponse, type: string, data: Record<string, unknown>): void {
  response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function streamReply(response: ServerResponse, request: FakeMessagesRequest, reply: Exclude<FakeMessagesReply, { kind: "error" }>, messageId: string): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  sendEvent(response, "message_start", { message: { id: messageId, type: "message", role: "assistant", model: request.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 0 } } });
  if (reply.kind === "text") {
    sendEvent(response, "content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    sendEvent(response, "content_block_delta", { index: 0, delta: { type: "text_delta", text: reply.text } });
  } else {
    sendEvent(response, "content_block_start", { index: 0, content_block: { type: "tool_use", id: reply.id, name: reply.name, input: {} } });
    sendEvent(response, "content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) } });
  }
  sendEvent(response, "content_block_stop", { index: 0 });
  sendEvent(response, "message_delta", { delta: { stop_reason: reply.kind === "text" ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } });
  sendEvent(response, "message_stop", {});
  response.end();
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts the fake on a free loopback port. The server does not keep the
 * process alive.
 *
 * @example
 * const api = await startFakeMessagesApi(async () => ({ kind: "text", text: "Hello." }));
 * const options = { env: { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "sk-fake" } };
 */
export async function startFakeMessagesApi(script: FakeMessagesScript): Promise<FakeMessagesApi> {
  const requests: FakeMessagesRequest[] = [];
  let replies = 0;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      if (request.method !== "POST" || !(request.url ?? "").startsWith("/v1/messages?") && request.url !== "/v1/messages") {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `the fake Messages API serves POST /v1/messages only, not ${request.method ?? ""} ${request.url ?? ""}` } }));
        return;
      }
      const parsed = JSON.parse(body) as FakeMessagesRequest;
      requests.push(parsed);
      const aborted = new AbortController();
      response.on("close", () => aborted.abort());
      let reply: FakeMessagesReply;
      try {
        reply = await script(parsed, aborted.signal);
      } catch (error) {
        // A script that throws is the provider failing: a 500, which the harness does not rework and resend as it does a 400.
        reply = { kind: "error", status: 500, message: error instanceof Error ? error.message : String(error) };
      }
      if (aborted.signal.aborted) return;
      if (reply.kind === "error") {
        response.writeHead(reply.status, { "content-type": "application/json" });
        response.end(JSON.stringify({ type: "error", error: { type: reply.status >= 500 ? "api_error" : "invalid_request_error", message: reply.message } }));
        return;
      }
      replies += 1;
      streamReply(response, parsed, reply, `msg_fake_${replies}`);
    })().catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
