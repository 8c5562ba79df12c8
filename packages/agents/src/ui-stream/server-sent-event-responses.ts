/**
 * Server-Sent Events framing for Fetch `Response` bodies: the AI SDK UI
 * message stream protocol, and plain event streams.
 */
import type { AgentUIMessageChunk, AgentResumeTokenChunk } from "./agent-ui-message-types.ts";
import type { AgentUIStreamItem } from "./agent-ui-stream-cursor.ts";

/** The headers of an AI SDK UI message stream response (protocol v1). */
export const uiMessageStreamHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/** The headers of a plain Server-Sent Events response. */
export const eventStreamHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** The transient part that carries a resume token. */
export function resumeTokenChunk(token: string): AgentResumeTokenChunk {
  return { type: "data-agent-resume-token", data: token, transient: true };
}

function dataFrame(chunk: AgentUIMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Items of a stream, with an abort that stops the reads behind them. */
export interface AgentUIStreamSource {
  items: AsyncGenerator<AgentUIStreamItem>;
  /** Stops the reads when the consumer goes away. */
  abort: () => void;
  /** The signal the reads stop on (the consumer's, or the request's). */
  signal: AbortSignal;
  /** Names the stream in the one log line an unexpected error gets. */
  description: string;
}

/**
 * Pulls items one at a time and hands each to `enqueue`; an unexpected error
 * becomes an `error` part, logged once.
 */
function pullItems<TOutput>(
  source: AgentUIStreamSource,
  enqueueItem: (controller: ReadableStreamDefaultController<TOutput>, item: AgentUIStreamItem) => void,
  enqueueEnd: (controller: ReadableStreamDefaultController<TOutput>, error: AgentUIMessageChunk | undefined) => void,
): UnderlyingDefaultSource<TOutput> {
  let isCancelled = false;
  return {
    async pull(controller) {
      try {
        const next = await source.items.next();
        if (isCancelled) return;
        if (next.done === true) {
          enqueueEnd(controller, undefined);
          controller.close();
        } else {
          enqueueItem(controller, next.value);
        }
      } catch (error) {
        if (isCancelled) return;
        if (source.signal.aborted) {
          controller.close();
          return;
        }
        console.warn(`perdure agents: the UI stream of ${source.description} failed:`, error);
        enqueueEnd(controller, { type: "error", errorText: describeError(error) });
        controller.close();
      }
    },
    async cancel() {
      isCancelled = true;
      source.abort();
      await source.items.return(undefined);
    },
  };
}

/**
 * The parts of a source as objects, each followed by its
 * `data-agent-resume-token` part.
 */
export function createAgentUIMessageChunkStream(source: AgentUIStreamSource): ReadableStream<AgentUIMessageChunk> {
  return new ReadableStream<AgentUIMessageChunk>(pullItems<AgentUIMessageChunk>(
    source,
    (controller, item) => {
      controller.enqueue(item.chunk);
      controller.enqueue(resumeTokenChunk(item.token));
    },
    (controller, error) => {
      if (error !== undefined) controller.enqueue(error);
    },
  ));
}

/**
 * A UI message stream response: `data: <part>` frames, each part and its
 * resume token in one write, then `data: [DONE]`.
 */
export function createUIMessageStreamSseResponse(source: AgentUIStreamSource): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>(pullItems<Uint8Array>(
    source,
    (controller, item) => controller.enqueue(encoder.encode(dataFrame(item.chunk) + dataFrame(resumeTokenChunk(item.token)))),
    (controller, error) => controller.enqueue(encoder.encode(`${error === undefined ? "" : dataFrame(error)}data: [DONE]\n\n`)),
  ));
  return new Response(body, { status: 200, headers: uiMessageStreamHeaders });
}

/**
 * An error response in the shape every Perdure HTTP route uses,
 * `{ "error": "<message>" }`, such as a 400 for a rejected resume token.
 */
export function createJsonErrorResponse(status: number, message: string): Response {
  return Response.json({ error: message }, { status });
}
