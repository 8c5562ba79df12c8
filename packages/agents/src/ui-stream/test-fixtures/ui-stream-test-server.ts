/**
 * A small HTTP server on loopback that mounts the UI stream helpers as the
 * contract's routes, through Fetch `Request` and `Response` objects as a
 * real server would. A test can cut the next streamed response after a given
 * number of parts, as a dropped connection (the socket is destroyed) or a
 * clean close (the response ends without finishing).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Client } from "@perdure/engine";
import type { AgentSessionFlow } from "../../session/create-agent-session-flow.ts";
import { findFreeLoopbackPorts } from "../../testing/find-free-loopback-ports.ts";
import { createAgentEventSseResponse } from "../agent-event-sse.ts";
import { convertAgentEventStreamSnapshotToJson, readAgentEventStreamSnapshot } from "../agent-event-stream-snapshot.ts";
import { resolveAgentToolApprovalsWithUIMessageStream } from "../agent-tool-approval-stream.ts";
import { readAgentQuestionResponses } from "../agent-question-responses.ts";
import { readAgentToolApprovalResponses } from "../agent-tool-approvals.ts";
import { createAgentUIMessageStreamResponse, sendAgentUserMessageWithUIMessageStream } from "../agent-ui-message-stream-responses.ts";
import { readAgentSessionUIMessages } from "../agent-ui-messages.ts";
import { agentResumeTokenHeaderName } from "../agent-ui-stream-token.ts";

/** How the next streamed response is cut. */
export interface ResponseCut {
  /** Cut after this many writes (a part and its token are one write). */
  afterParts: number;
  /** `drop` destroys the socket (the browser sees a network error); `close` ends the response cleanly. */
  mode: "drop" | "close";
}

/** A request the server answered, for assertions. */
export interface ServedRequest {
  method: string;
  path: string;
  status: number;
}

/** The running server. */
export interface UIStreamTestServer {
  baseUrl: string;
  served: ServedRequest[];
  /** Cuts the next response whose body is a stream. */
  cutNextStream(cut: ResponseCut): void;
  close(): Promise<void>;
}

interface ChatRequestBody {
  id: string;
  messages: { id?: string; role?: string; parts?: { type?: string; text?: string }[] }[];
}

async function route(request: Request, options: { client: Client; flow: AgentSessionFlow }): Promise<Response> {
  const { client, flow } = options;
  const url = new URL(request.url);
  const chat = /^\/api\/chat\/([^/]+)$/.exec(url.pathname);
  const chatStream = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
  const snapshot = /^\/sessions\/([^/]+)\/snapshot$/.exec(url.pathname);
  const events = /^\/sessions\/([^/]+)\/events$/.exec(url.pathname);
  const resumeToken = request.headers.get(agentResumeTokenHeaderName) ?? undefined;
  if (request.method === "GET" && chat?.[1] !== undefined) {
    return Response.json(await readAgentSessionUIMessages({ client, flow, flowId: decodeURIComponent(chat[1]) }));
  }
  if (request.method === "POST" && url.pathname === "/api/chat") {
    const { id, messages } = (await request.json()) as ChatRequestBody;
    const lastMessage = messages.at(-1);
    if (lastMessage?.role === "assistant") {
      return resolveAgentToolApprovalsWithUIMessageStream({
        client, flow, flowId: id,
        approvals: readAgentToolApprovalResponses(lastMessage),
        questionResponses: readAgentQuestionResponses(lastMessage),
        resumeToken: url.searchParams.get("withToken") === "1" ? resumeToken : undefined,
        signal: request.signal,
      });
    }
    const text = (lastMessage?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text ?? ""] : [])).join("");
    return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: id, text, messageId: lastMessage?.id, signal: request.signal });
  }
  if (request.method === "GET" && chatStream?.[1] !== undefined) {
    return createAgentUIMessageStreamResponse({
      client, flow, flowId: decodeURIComponent(chatStream[1]),
      resumeToken,
      continueAfterResumeToken: url.searchParams.get("continue") === "1",
      signal: request.signal,
    });
  }
  if (request.method === "GET" && snapshot?.[1] !== undefined) {
    const value = await readAgentEventStreamSnapshot({ client, flow, flowId: decodeURIComponent(snapshot[1]) });
    return Response.json(convertAgentEventStreamSnapshotToJson(value));
  }
  if (request.method === "GET" && events?.[1] !== undefined) {
    // Last-Event-ID wins over the query parameter, as the contract's route does.
    const token = request.headers.get("last-event-id") ?? url.searchParams.get("resumeToken") ?? "";
    return createAgentEventSseResponse({
      client, flow, flowId: decodeURIComponent(events[1]), resumeToken: token, signal: request.signal,
      ...(url.searchParams.get("writeTimes") === "1" ? { includeWriteTimes: true } : {}),
    });
  }
  return new Response("not found\n", { status: 404 });
}

async function toRequest(incoming: IncomingMessage, baseUrl: string, signal: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const method = incoming.method ?? "GET";
  return new Request(new URL(incoming.url ?? "/", baseUrl), {
    method,
    headers,
    signal,
    ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) }),
  });
}

function write(response: ServerResponse, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    response.write(chunk, () => resolve());
  });
}

async function sendResponse(outgoing: ServerResponse, response: Response, cut: ResponseCut | undefined): Promise<void> {
  outgoing.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body === null) {
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  let parts = 0;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      await write(outgoing, next.value);
      parts += 1;
      if (cut !== undefined && parts >= cut.afterParts) {
        if (cut.mode === "drop") outgoing.socket?.destroy();
        else outgoing.end();
        await reader.cancel();
        return;
      }
      if (outgoing.destroyed) {
        await reader.cancel();
        return;
      }
    }
    outgoing.end();
  } catch (error) {
    outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Starts the server on a free loopback port. */
export async function startUIStreamTestServer(options: { client: Client; flow: AgentSessionFlow }): Promise<UIStreamTestServer> {
  const [port] = await findFreeLoopbackPorts(1);
  const baseUrl = `http://127.0.0.1:${String(port)}`;
  const served: ServedRequest[] = [];
  let pendingCut: ResponseCut | undefined;
  // Resume tokens travel in a header and may reach 64 KiB; Node's default limit is 16 KiB.
  const server: Server = createServer({ maxHeaderSize: 256 * 1024 }, (incoming, outgoing) => {
    const abort = new AbortController();
    outgoing.on("close", () => abort.abort());
    void (async () => {
      try {
        const request = await toRequest(incoming, baseUrl, abort.signal);
        const response = await route(request, options);
        served.push({ method: request.method, path: new URL(request.url).pathname, status: response.status });
        const cut = response.body !== null && response.headers.get("content-type") === "text/event-stream" ? pendingCut : undefined;
        if (cut !== undefined) pendingCut = undefined;
        await sendResponse(outgoing, response, cut);
      } catch (error) {
        console.error("ui stream test server:", error);
        if (!outgoing.headersSent) outgoing.writeHead(500);
        outgoing.end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    baseUrl,
    served,
    cutNextStream(cut) {
      pendingCut = cut;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
