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

/** How {@link discardRestOfBody} ended. */
export type DiscardOutcome = "ended" | "declared-over-limit" | "over-limit" | "timed-out" | "closed";

/**
 * Reads and throws away the rest of a refused request's body before its
 * answer is written, so that the client has sent everything by the time the
 * answer comes and its connection stays usable. An HTTP client still sending
 * its body when an answer and the close arrive may report the failed write
 * (`fetch` says EPIPE or "other side closed") instead of the answer, however
 * gently the server closes; a server that answers only after the body cannot
 * be misread so.
 *
 * Bounded like the lingering close: a declared length over `maxDiscardBytes`
 * is not read at all, and reading stops past `maxDiscardBytes` or
 * `maxLingerMs` after the refusal. Only `"ended"` leaves the request read to
 * its end; for the others, close the connection ({@link closeRefusedUpload}).
 */
export function discardRestOfBody(incoming: IncomingMessage, options: CloseRefusedUploadOptions = {}): Promise<DiscardOutcome> {
  const discardLimit = options.maxDiscardBytes ?? maxDiscardBytes;
  const declared = Number(incoming.headers["content-length"]);
  if (Number.isFinite(declared) && declared > discardLimit) return Promise.resolve("declared-over-limit");
  // Whoever read part of the body (a web stream over it, released when the limit was passed) would pause it
  // again once its queue filled; from here on only this reads it.
  incoming.removeAllListeners("data");
  incoming.removeAllListeners("readable");
  return new Promise((resolve) => {
    let discarded = 0;
    const settle = (outcome: DiscardOutcome): void => {
      clearTimeout(latest);
      incoming.off("data", count);
      incoming.off("end", ended);
      incoming.off("close", closed);
      if (outcome !== "ended") incoming.pause();
      resolve(outcome);
    };
    const count = (chunk: Buffer): void => {
      discarded += chunk.length;
      if (discarded > discardLimit) settle("over-limit");
    };
    const ended = (): void => settle("ended");
    const closed = (): void => settle(incoming.readableEnded ? "ended" : "closed");
    const latest = setTimeout(() => settle("timed-out"), options.maxLingerMs ?? maxLingerMs);
    latest.unref();
    incoming.on("data", count);
    incoming.once("end", ended);
    incoming.once("close", closed);
    incoming.resume();
  });
}

/**
 * Call with the request of an error response that has an unread body
 * ({@link hasUnreadBody}), before the response is written. Reads the rest of
 * the body ({@link discardRestOfBody}); when that does not end the request,
 * closes the connection after the answer ({@link closeRefusedUpload}): as that
 * says for a body declared too large, and at once reading no further for one
 * that ran past the limit or past the linger time. Only `"ended"` keeps the
 * connection; for any other outcome the answer must say `Connection: close`
 * ({@link withConnectionClose}).
 */
export async function settleRefusedUpload(incoming: IncomingMessage, options: CloseRefusedUploadOptions = {}): Promise<DiscardOutcome> {
  const outcome = await discardRestOfBody(incoming, options);
  if (outcome === "declared-over-limit") closeRefusedUpload(incoming, options);
  else if (outcome === "over-limit") closeRefusedUpload(incoming, { ...options, maxDiscardBytes: 0 });
  else if (outcome !== "ended") closeRefusedUpload(incoming, { ...options, maxLingerMs: 0 });
  return outcome;
}

/**
 * Call with the request of an error response that has an unread body
 * ({@link hasUnreadBody}) and that {@link discardRestOfBody} could not read
 * to its end, before the response is written.
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
