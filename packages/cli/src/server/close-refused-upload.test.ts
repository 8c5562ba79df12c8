/**
 * closeRefusedUpload on a real node:http server and raw TCP clients: a
 * refused upload's connection is closed only when the close cannot reset a
 * client that sends at most what it declared, so a client that stalls mid-upload
 * (as a busy machine makes it) still reads its 413; and a client that sends
 * more than the discard limit is read no further and closed. Before that,
 * perdure dev reads a small refused body to its end (settleRefusedUpload), so
 * its client gets the answer only once it has sent everything.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";
import { test, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { closeRefusedUpload, hasUnreadBody, settleRefusedUpload, type CloseRefusedUploadOptions, type DiscardOutcome } from "./close-refused-upload.ts";

const reason = JSON.stringify({ error: "request body is over 1024 bytes" });

interface Refusal {
  /** The server's side of the refused connection. */
  socket: Socket;
  /** Resolves when the 413 is written. */
  answered: Promise<void>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
}

/** A server that refuses every upload over 1 KiB before reading it, as perdure dev does; `next()` is the next refusal. */
async function startRefusingServer(t: TestContext, options: CloseRefusedUploadOptions): Promise<{ port: number; next: () => Promise<Refusal> }> {
  const waiting: ((refusal: Refusal) => void)[] = [];
  const ready: Refusal[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    assert.ok(hasUnreadBody(request));
    const socket = request.socket;
    const closed = once(socket, "close").then(() => undefined);
    closeRefusedUpload(request, options);
    const answered = once(response, "finish").then(() => undefined);
    response.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(reason), connection: "close" });
    response.end(reason);
    const refusal = { socket, answered, closed };
    const waiter = waiting.shift();
    if (waiter === undefined) ready.push(refusal);
    else waiter(refusal);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const next = (): Promise<Refusal> => {
    const refusal = ready.shift();
    return refusal === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(refusal);
  };
  return { port: (server.address() as AddressInfo).port, next };
}

function requestHead(bodyBytes: number): string {
  return `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`;
}

/** Everything the client reads until the server's end, or the error that ended it. */
function readAll(client: Socket): Promise<{ text: string; error: string | undefined }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    client.on("data", (chunk: Buffer) => chunks.push(chunk));
    client.once("end", () => resolve({ text: Buffer.concat(chunks).toString(), error: undefined }));
    client.once("error", (error: NodeJS.ErrnoException) => resolve({ text: Buffer.concat(chunks).toString(), error: error.code ?? error.message }));
  });
}

void test("a client that stalls mid-upload after the refusal still reads its 413: the server reads the whole declared body and only then closes", async (t) => {
  // A short over-limit linger: no timer that short may close a connection whose client still sends what it declared.
  const { port, next } = await startRefusingServer(t, { lingerMs: 20 });
  const body = Buffer.alloc(512 * 1024, "x");
  const head = requestHead(body.length);
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  client.pause(); // Reads nothing yet, as a client whose event loop is busy.
  client.write(head);
  client.write(body.subarray(0, 64 * 1024));
  const refusal = await next();
  await refusal.answered;
  // The client stalls well past the server's short timer before it sends the rest.
  await delay(200);
  client.write(body.subarray(64 * 1024));
  const read = readAll(client);
  client.resume();
  const { text, error } = await read;
  assert.equal(error, undefined, `the client's connection was reset: ${text.slice(0, 80)}`);
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.match(text, /\r\nconnection: close\r\n/i);
  assert.ok(text.endsWith(reason), text);
  client.end();
  await refusal.closed;
  assert.equal(refusal.socket.bytesRead, Buffer.byteLength(head) + body.length, "the server read the whole body before it closed");
  client.destroy();
});

void test("a client that reads its 413 and closes its side: the server closes the connection then, having read the whole body", async (t) => {
  const { port, next } = await startRefusingServer(t, {});
  const body = Buffer.alloc(256 * 1024, "x");
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  const read = readAll(client);
  client.write(requestHead(body.length));
  client.write(body);
  const refusal = await next();
  const { text, error } = await read;
  assert.equal(error, undefined);
  assert.match(text, /^HTTP\/1\.1 413 /);
  client.end();
  await refusal.closed;
  assert.equal(refusal.socket.bytesRead, Buffer.byteLength(requestHead(body.length)) + body.length);
  client.destroy();
});

void test("a client that sends more than the discard limit is read no further than the limit and closed", async (t) => {
  const maxDiscardBytes = 256 * 1024;
  const { port, next } = await startRefusingServer(t, { maxDiscardBytes, lingerMs: 50 });
  const body = Buffer.alloc(8 * 1024 * 1024, "x");
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  client.on("error", () => undefined); // The reset of such a client is expected.
  client.write(requestHead(body.length));
  client.write(body);
  const refusal = await next();
  await refusal.closed;
  assert.ok(refusal.socket.bytesRead < maxDiscardBytes + 1024 * 1024, `read ${refusal.socket.bytesRead} bytes of a ${body.length}-byte body`);
  client.destroy();
});

/** A server that refuses every upload over 1 KiB as perdure dev does (settleRefusedUpload): the rest of the body read first, then the 413. */
async function startDiscardingServer(t: TestContext, options: CloseRefusedUploadOptions): Promise<{ port: number; outcomes: DiscardOutcome[] }> {
  const outcomes: DiscardOutcome[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void settleRefusedUpload(request, options).then((outcome) => {
      outcomes.push(outcome);
      response.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(reason), ...(outcome === "ended" ? {} : { connection: "close" }) });
      response.end(reason);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return { port: (server.address() as AddressInfo).port, outcomes };
}

/** Resolves with what the client has read once it holds `count` whole 413 answers. */
function readAnswers(client: Socket, count: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    client.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      if (text.split(reason).length - 1 >= count) resolve(text);
    });
    client.once("error", reject);
    client.once("end", () => reject(new Error(`the server ended the connection after ${JSON.stringify(text.slice(0, 200))}`)));
  });
}

void test("a refused body within the discard limit is read to its end before the answer: a stalled client reads nothing until it has sent it all, then its 413, and its connection serves the next request", async (t) => {
  const { port, outcomes } = await startDiscardingServer(t, {});
  const body = Buffer.alloc(512 * 1024, "x");
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  let received = 0;
  client.on("data", (chunk: Buffer) => (received += chunk.length));
  client.write(requestHead(body.length));
  client.write(body.subarray(0, 64 * 1024));
  // The client stalls mid-upload; a server that answered early would have answered by now.
  await delay(200);
  assert.equal(received, 0, "the server answered before the client had sent its whole body");
  const answers = readAnswers(client, 2);
  client.write(body.subarray(64 * 1024));
  // Another refused upload on the same connection: the first was read to its end, so this one parses as a request.
  client.write(requestHead(2048));
  client.write(Buffer.alloc(2048, "y"));
  const text = await answers;
  assert.equal(text.match(/HTTP\/1\.1 413 /g)?.length, 2, text);
  assert.doesNotMatch(text, /connection: close/i);
  assert.deepEqual(outcomes, ["ended", "ended"]);
  client.destroy();
});

void test("a refused body declared over the discard limit is not read: the answer comes at once and the connection closes as a lingering close does", async (t) => {
  const maxDiscardBytes = 64 * 1024;
  const { port, outcomes } = await startDiscardingServer(t, { maxDiscardBytes, lingerMs: 50 });
  const client = connect(port, "127.0.0.1");
  await once(client, "connect");
  client.on("error", () => undefined); // A reset after the answer is expected of a client that keeps sending.
  const answers = readAnswers(client, 1);
  client.write(requestHead(8 * 1024 * 1024));
  client.write(Buffer.alloc(1024, "x"));
  const text = await answers;
  assert.match(text, /^HTTP\/1\.1 413 [^]*connection: close/i);
  assert.deepEqual(outcomes, ["declared-over-limit"]);
  client.destroy();
});

void test("a chunked refused body that runs past the discard limit is read no further, and one that stalls past the linger time is given up", async (t) => {
  const maxDiscardBytes = 64 * 1024;
  const { port, outcomes } = await startDiscardingServer(t, { maxDiscardBytes, maxLingerMs: 300, lingerMs: 50 });
  const chunked = (bytes: number): string => `${bytes.toString(16)}\r\n${"x".repeat(bytes)}\r\n`;
  const head = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

  const flooding = connect(port, "127.0.0.1");
  await once(flooding, "connect");
  flooding.on("error", () => undefined);
  const flooded = readAnswers(flooding, 1);
  flooding.write(head);
  for (let sent = 0; sent <= 2 * maxDiscardBytes; sent += 16 * 1024) flooding.write(chunked(16 * 1024));
  assert.match(await flooded, /^HTTP\/1\.1 413 /);
  assert.deepEqual(outcomes, ["over-limit"]);
  flooding.destroy();

  const stalling = connect(port, "127.0.0.1");
  await once(stalling, "connect");
  stalling.on("error", () => undefined);
  const stalled = readAnswers(stalling, 1);
  stalling.write(head);
  stalling.write(chunked(1024));
  // It never sends the rest: the server answers once its linger time is over.
  assert.match(await stalled, /^HTTP\/1\.1 413 /);
  assert.deepEqual(outcomes, ["over-limit", "timed-out"]);
  stalling.destroy();
});
