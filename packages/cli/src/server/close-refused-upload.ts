/**
 * What happens to the connection of a request the server refused (401, 403,
 * 404, 413, …) before reading its whole body. Reading the rest to the end
 * would let a refused caller make the server read gigabytes; keeping the
 * connection for another request would make the server parse what is left
 * of the body as one; and closing it at once, or a while later, resets it:
 * a close with unread data in the receive buffer sends RST, and the client
 * loses the answer it has not read yet, or a later request it sent on the
 * same connection fails with ECONNRESET ("other side closed"). With 100
 * concurrent clients on a busy machine both happened.
 *
 * So the answer says `Connection: close` (no client sends another request
 * on it), and once it is written the server half-closes: it sends FIN after
 * the answer, so the client reads the whole answer and then the end, while
 * the server keeps reading and discarding what the client still sends, up
 * to `maxDiscardBytes`, then stops reading. The socket is destroyed when the
 * client closes its side, or after `lingerMs` at the latest (nginx's
 * lingering close works the same way).
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** How much of a refused upload is read and thrown away while the connection lingers. */
export const maxDiscardBytes = 4 * 1024 * 1024;
/**
 * How long the connection may linger for the client to read its answer: as
 * long as nginx's lingering timeout. The client normally closes first, once
 * it read the answer and the end.
 */
export const lingerMs = 5000;

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
export function closeRefusedUpload(incoming: IncomingMessage): void {
  const socket: Socket = incoming.socket;
  let discarded = 0;
  const close = (): void => {
    clearTimeout(timer);
    socket.off("data", count);
    socket.destroy();
  };
  const count = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > maxDiscardBytes) socket.pause();
  };
  const timer = setTimeout(close, lingerMs);
  timer.unref();
  socket.on("data", count);
  socket.once("end", close);
  socket.once("close", () => clearTimeout(timer));
  // Node ends a `Connection: close` response with destroySoon(), which destroys the socket as soon as
  // the answer is written: with unread bytes that is a reset. Here it only half-closes (FIN after the
  // answer); the client's end, or the linger timer, destroys the socket.
  socket.destroySoon = function halfClose(this: Socket): void {
    if (this.writable) this.end();
  };
  // Node reads and discards an unconsumed body once the answer is sent.
  incoming.resume();
}
