/**
 * Plain Server-Sent Events of a session's `AgentEvents`, for a UI that
 * applies the event rules itself. Each event's `id` is its engine Stream
 * token, so an `EventSource` resumes through `Last-Event-ID`, and its data
 * is exactly the contract's `AgentEvent` wire JSON. With `includeWriteTimes`,
 * a frame of another event type says when each event was written.
 */
import { describeValue, InvalidInputError, InvalidResumeTokenError, type StreamMessage } from "@perdure/engine";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { convertAgentEventToJson } from "./agent-event-json.ts";
import { agentEventWriteTimesFrame } from "./agent-event-write-times.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";
import { createJsonErrorResponse, eventStreamHeaders } from "./server-sent-event-responses.ts";

/** Options of {@link createAgentEventSseResponse}. */
export interface AgentEventSseOptions extends AgentUIStreamSessionOptions {
  /**
   * The engine Stream token to continue after: the request's `Last-Event-ID`
   * header when present, else the snapshot's `resume_token`. Empty reads from
   * the oldest retained event.
   */
  resumeToken: string;
  /** Stops the stream, such as the request's signal. */
  signal?: AbortSignal | undefined;
  /**
   * Also send, before each batch of events, one frame of event type
   * `perdure-write-times` (`agentEventWriteTimesEventName`) whose data maps
   * each event's `id` to the ISO 8601 time it was written, so a UI that
   * replays retained events can show when each happened. The events' own
   * `data` is the contract's wire JSON either way; `EventSource.onmessage`
   * never sees the extra frame.
   * @default false
   */
  includeWriteTimes?: boolean | undefined;
}

const readLimit = 100;
/** How long a read waits for new events before the stream sends a keep-alive comment. */
const keepAliveMs = 15_000;

function eventFrames(messages: readonly StreamMessage<AgentEvent>[], includeWriteTimes: boolean): string {
  const events = messages.map((message) => `id: ${message.token}\ndata: ${JSON.stringify(convertAgentEventToJson(message.value))}\n\n`).join("");
  return includeWriteTimes ? agentEventWriteTimesFrame(messages) + events : events;
}

/**
 * The session's events as Server-Sent Events from a resume token, until the
 * signal aborts. A token the engine rejects (forged, corrupt, or another
 * session's) gets a 400, which stops an `EventSource`: load the snapshot again.
 *
 * @example
 * // GET /sessions/:id/events
 * const resumeToken = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("resumeToken") ?? "";
 * return createAgentEventSseResponse({ client, flow, flowId: sessionId, resumeToken, signal: request.signal });
 */
export async function createAgentEventSseResponse(options: AgentEventSseOptions): Promise<Response> {
  const session = resolveAgentUIStreamSession(options);
  if (typeof options.resumeToken !== "string") {
    throw new InvalidInputError(`resumeToken ${describeValue(options.resumeToken)} is invalid: pass the Last-Event-ID header, the snapshot's resume_token, or ""`);
  }
  const includeWriteTimes = options.includeWriteTimes ?? false;
  if (typeof includeWriteTimes !== "boolean") throw new InvalidInputError(`includeWriteTimes ${describeValue(options.includeWriteTimes)} is invalid: use true or false`);
  const { client, flow, flowId } = session;
  const controller = new AbortController();
  const signal = options.signal === undefined ? controller.signal : AbortSignal.any([controller.signal, options.signal]);
  let after = options.resumeToken === "" ? undefined : options.resumeToken;
  let first: StreamMessage<AgentEvent>[];
  try {
    first = (await client.readStream(flowId, flow.agentEvents, { limit: readLimit, ...(after === undefined ? {} : { after }) })).messages;
  } catch (error) {
    if (!InvalidResumeTokenError.isInstance(error)) throw error;
    return createJsonErrorResponse(400, `the resume token was rejected (${error.message}); load the snapshot again`);
  }
  const encoder = new TextEncoder();
  let pending: StreamMessage<AgentEvent>[] | undefined = first;
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      try {
        const messages = pending ?? (await client.readStream(flowId, flow.agentEvents, { limit: readLimit, waitMs: keepAliveMs, signal, ...(after === undefined ? {} : { after }) })).messages;
        pending = undefined;
        if (signal.aborted) {
          stream.close();
        } else if (messages.length === 0) {
          stream.enqueue(encoder.encode(": keep-alive\n\n"));
        } else {
          after = messages.at(-1)?.token ?? after;
          stream.enqueue(encoder.encode(eventFrames(messages, includeWriteTimes)));
        }
      } catch (error) {
        // A read cut short by the consumer leaving (the store may close next) is no failure.
        if (signal.aborted) {
          stream.close();
          return;
        }
        console.warn(`perdure agents: the event stream of ${flowId} failed:`, error);
        stream.error(error);
      }
    },
    cancel() {
      controller.abort();
    },
  });
  return new Response(body, { status: 200, headers: eventStreamHeaders });
}
