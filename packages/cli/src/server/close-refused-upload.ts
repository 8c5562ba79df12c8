/**
 * What happens to the rest of a body the server refused (401, 403, 413, …)
 * while the client is still sending it. Reading it to the end would let a
 * refused caller make the server read gigabytes; closing at once can reset
 * the connection before the client reads its answer. So the server reads
 * and discards at most `maxDiscardBytes`, then stops reading (the client's
 * sends stall, its reads do not), and closes the connection after
 * `lingerMs`, by when the client has read its answer.
 */
import type { IncomingMessage } from "node:http";

/** How much of a refused upload is read and thrown away before the connection closes. */
export const maxDiscardBytes = 256 * 1024;
/**
 * How long the connection may linger for the client to read its answer: as
 * long as nginx's lingering timeout, since one second was too short for a
 * client on a busy machine, which then lost the answer to a reset.
 */
export const lingerMs = 5000;

/** Call with the request of an error response; does nothing when its body was read to the end. */
export function closeRefusedUpload(incoming: IncomingMessage): void {
  if (incoming.method === "GET" || incoming.method === "HEAD" || incoming.readableEnded) return;
  const { socket } = incoming;
  let discarded = 0;
  const close = (): void => {
    clearTimeout(timer);
    socket.off("data", count);
    incoming.off("end", keep);
    socket.destroy();
  };
  const count = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > maxDiscardBytes) socket.pause();
  };
  // The client finished sending after all: the connection stays usable.
  const keep = (): void => {
    clearTimeout(timer);
    socket.off("data", count);
  };
  const timer = setTimeout(close, lingerMs);
  timer.unref();
  socket.on("data", count);
  incoming.once("end", keep);
  // Node reads and discards an unconsumed body once the answer is sent.
  incoming.resume();
}
