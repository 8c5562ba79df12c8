/**
 * What the loopback provider fakes share: a loopback HTTP server that reads
 * a bounded JSON body, a scripted model that answers from the conversation,
 * queued failures (a 429 with `retry-after`, say), and a log of requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The conversation as the scripted model reads it, whatever the wire format. */
export interface FakeConversation {
  /** The text of the last user message. */
  lastUserText: string;
  /** Tool results after the last user message, oldest first. */
  toolResults: { toolName: string; output: string }[];
  /** The tool names the request offered. */
  toolNames: string[];
}

/** What the scripted model answers: text, or one tool call. */
export type FakeReply = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** A failure the fake answers the next request with, instead of a reply. */
export interface FakeFailure {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** One request the fake received. */
export interface FakeRequest {
  path: string;
  body: Record<string, unknown>;
  receivedAt: number;
  /** The status the fake answered with. */
  status: number;
}

export class FakeRequestError extends Error {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    super(`fake provider refused the request with ${status}: ${JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
  }
}

const maxBodyBytes = 4 * 1024 * 1024;

/**
 * A loopback server that answers each POST with `handle`, or with the next
 * queued failure. `handle` throws a {@link FakeRequestError} to refuse a
 * request the real provider would refuse.
 */
export abstract class LoopbackProvider {
  readonly requests: FakeRequest[] = [];
  private readonly failures: FakeFailure[] = [];
  private server: Server | undefined;

  protected readonly reply: (conversation: FakeConversation) => FakeReply;

  constructor(reply: (conversation: FakeConversation) => FakeReply) {
    this.reply = reply;
  }

  /** The base URL to point the AI SDK provider at, such as `http://127.0.0.1:4711/v1`. */
  baseUrl = "";

  /** Answers the next request with this failure. */
  failNext(failure: FakeFailure): void {
    this.failures.push(failure);
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Writes the streamed reply for a request `handle` accepted. */
  protected abstract handle(path: string, body: Record<string, unknown>, response: ServerResponse): void;

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? "/", "http://fake").pathname;
    let body: Record<string, unknown>;
    try {
      body = await readJsonBody(request);
    } catch (error) {
      this.refuse(response, path, {}, new FakeRequestError(400, { error: { message: String(error) } }));
      return;
    }
    const failure = this.failures.shift();
    if (failure !== undefined) {
      this.requests.push({ path, body, receivedAt: Date.now(), status: failure.status });
      response.writeHead(failure.status, { "content-type": "application/json", ...failure.headers }).end(JSON.stringify(failure.body));
      return;
    }
    try {
      this.handle(path, body, response);
      this.requests.push({ path, body, receivedAt: Date.now(), status: 200 });
    } catch (error) {
      if (!(error instanceof FakeRequestError)) throw error;
      this.refuse(response, path, body, error);
    }
  }

  private refuse(response: ServerResponse, path: string, body: Record<string, unknown>, error: FakeRequestError): void {
    this.requests.push({ path, body, receivedAt: Date.now(), status: error.status });
    response.writeHead(error.status, { "content-type": "application/json" }).end(JSON.stringify(error.body));
  }
}

/** Opens a server-sent event stream and writes each `[event, data]` pair. */
export function writeEventStream(response: ServerResponse, events: [string, Record<string, unknown>][]): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  response.end();
}

/** Splits text into a few deltas, so a stream carries more than one. */
export function deltasOf(text: string): string[] {
  const words = text.split(/(?<= )/);
  return words.length === 0 ? [text] : words;
}

async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new Error(`request body over ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  const value = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("request body is not a JSON object");
  return value as Record<string, unknown>;
}
