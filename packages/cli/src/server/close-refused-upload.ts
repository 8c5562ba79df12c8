/**
 * What happens to the connection of a request the server refused (401, 403,
 * 404, 413, …) before reading its whole body. Reading the rest to the end
 * would let a refused caller make the server read gigabytes; keeping the
 * connection for another request would make the server parse what is left
 * of the body as one; and closing it while the client is still sending
 * resets it: a close with unread data in the receive buffer, or data that
 * arrives after the close, sends RST, and the client loses the answer it
 * has not read yet (its next write fails with EPIPE or ECONNRESET, and
 * `fetch` reports that instead of the answer).
 *
 * So the answer says `Connection: close` (no client sends another request
 * on it), and once it is written the server half-closes: it sends FIN after
 * the answer, so the client reads the whole answer and then the end, while
 * the server keeps reading and discarding what the client still sends, up
 * to `maxDiscardBytes`. It closes the socket only when that cannot reset a
 * client that sends at most what it declared:
 * - the client closed its side (it read the answer and the end);
 * - the client sent more than `maxDiscardBytes`: the server stops reading,
 *   and closes `lingerMs` later (such a client may see a reset);
 * - `maxLingerMs` after the refusal at the latest (nginx's lingering_time),
 *   for a client that never closes.
 * No shorter timer decides: on a loaded machine a client (or this server)
 * can stall for seconds mid-upload, and a close 5 s after the refusal,
 * whatever the client had sent, reset 33 of 300 refused 2 MiB uploads in a
 * clean-clone run (their `fetch` failed with EPIPE instead of the 413).
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** How much of a refused upload is read and thrown away while the connection lingers. */
export const maxDiscardBytes = 4 * 1024 * 1024;
/** How long a connection stays open after the client sent more than {@link maxDiscardBytes} (nginx's lingering timeout). */
export const lingerMs = 5000;
/** How long a refused upload's connection may stay open at most (nginx's lingering time). */
export const maxLingerMs = 30_000;

/** Options of {@link closeRefusedUpload}; tests shorten the times. */
export interface CloseRefusedUploadOptions {
  /** @default {@link maxDiscardBytes} */
  maxDiscardBytes?: number;
  /** @default {@link lingerMs} */
  lingerMs?: number;
  /** @default {@link maxLingerMs} */
  maxLingerMs?: number;
}

/** Whether the request of an error response still has body bytes the server has not read. */
export function hasUnreadBody(incoming: IncomingMessage): boolean {
  return incoming.method !== "GET" && incoming.method !== "HEAD" && !incoming.readableEnded;
}

/**
 * The refused response with `Connection: close`, so the client sends nothing
 * more on its connection. Its body (a short JSON reason) is read first, so the
 * answer keeps its `Content-Length` and a client can tell it ended.
 */
export async function withConnectionClose(response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  headers.set("connection", "close");
  return new Response(await response.arrayBuffer(), { status: response.status, statusText: response.statusText, headers });
}

/**
 * Call with the request of an error response that has an unread body
 * ({@link hasUnreadBody}), before the response is written.
 */
export function closeRefusedUpload(incoming: IncomingMessage, options: CloseRefusedUploadOptions = {}): void {
  const socket: Socket = incoming.socket;
  const discardLimit = options.maxDiscardBytes ?? maxDiscardBytes;
  let discarded = 0;
  let overLimit: NodeJS.Timeout | undefined;
  const close = (): void => {
    clearTimeout(latest);
    clearTimeout(overLimit);
    socket.off("data", count);
    socket.destroy();
  };
  const count = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded <= discardLimit || overLimit !== undefined) return;
    // The request pauses too: while it flows, Node's server resumes the socket each time it reads from it.
    incoming.pause();
    socket.pause();
    overLimit = setTimeout(close, options.lingerMs ?? lingerMs);
    overLimit.unref();
  };
  const latest = setTimeout(close, options.maxLingerMs ?? maxLingerMs);
  latest.unref();
  socket.on("data", count);
  socket.once("end", close);
  socket.once("close", () => {
    clearTimeout(latest);
    clearTimeout(overLimit);
  });
  // Node ends a `Connection: close` response with destroySoon(), which destroys the socket as soon as
  // the answer is written: with unread bytes that is a reset. Here it only half-closes (FIN after the
  // answer); one of the closes above destroys the socket.
  socket.destroySoon = function halfClose(this: Socket): void {
    if (this.writable) this.end();
  };
  // Whoever read part of the body (a web stream over it, released when the limit was passed) would pause it
  // again once its queue filled; nobody reads the rest, so it flows to nothing and ends.
  incoming.removeAllListeners("data");
  incoming.removeAllListeners("readable");
  incoming.resume();
}
