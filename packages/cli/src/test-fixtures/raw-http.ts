/**
 * HTTP requests with full control over what goes on the wire, for the dev
 * server's security tests: any `Host` header, raw paths with broken
 * percent-encodings, and bodies sent in chunks. `fetch` refuses or rewrites
 * some of these.
 */
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { Readable } from "node:stream";

/** A request as it goes on the wire. */
export interface RawHttpRequest {
  method: string;
  /** The request target, sent as it is. */
  path: string;
  headers?: Record<string, string>;
  /** A body sent with `Content-Length`, or a stream sent chunked. */
  body?: string | Buffer | Readable;
}

/** What came back: the status, the content type, and up to 64 KiB of the body (streams are cut at their headers). */
export interface RawHttpResponse {
  status: number;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const maxBodyBytes = 64 * 1024;

/** Sends one request on its own connection to `origin` (`http://host:port`). */
export function sendRaw(origin: string, raw: RawHttpRequest): Promise<RawHttpResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: raw.method, path: raw.path, headers: raw.headers ?? {}, agent: false });
    request.once("error", reject);
    request.once("response", (response) => {
      const contentType = String(response.headers["content-type"] ?? "");
      const answer = (body: string): void => resolve({ status: response.statusCode ?? 0, contentType, headers: response.headers, body });
      if (contentType.startsWith("text/event-stream")) {
        // A live stream: its status and headers are the answer.
        response.destroy();
        answer("");
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        if (size < maxBodyBytes) chunks.push(chunk);
        size += chunk.length;
      });
      response.once("end", () => answer(Buffer.concat(chunks).toString("utf8").slice(0, maxBodyBytes)));
      response.once("error", reject);
    });
    if (raw.body instanceof Readable) {
      raw.body.once("error", reject);
      raw.body.pipe(request);
    } else {
      request.end(raw.body);
    }
  });
}

/** A stream of `totalBytes` zero bytes in 64 KiB chunks, sent chunked. */
export function zeroBytes(totalBytes: number): Readable {
  const chunk = Buffer.alloc(64 * 1024);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= totalBytes) {
        this.push(null);
        return;
      }
      const size = Math.min(chunk.length, totalBytes - sent);
      sent += size;
      this.push(size === chunk.length ? chunk : chunk.subarray(0, size));
    },
  });
}

/** Options of {@link uploadRaw}. */
export interface RawUpload {
  path: string;
  headers: Record<string, string>;
  totalBytes: number;
  /** Send `Content-Length: totalBytes` instead of chunks. */
  isLengthDeclared: boolean;
}

/**
 * Uploads `totalBytes` zero bytes on a bare socket while reading the answer,
 * as a hostile client would: it keeps sending after the server answered, and
 * stops quietly when the server closes the connection. Node's HTTP client
 * drops an answer that arrives during an upload it cannot finish.
 */
export function uploadRaw(origin: string, upload: RawUpload): Promise<{ status: number; body: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunk = Buffer.alloc(64 * 1024);
    let received = Buffer.alloc(0);
    let sent = 0;
    let isDone = false;
    const finish = (error?: Error): void => {
      if (isDone) return;
      const text = received.toString("latin1");
      const headerEnd = text.indexOf("\r\n\r\n");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (headerEnd < 0 || status?.[1] === undefined) {
        if (error !== undefined) {
          isDone = true;
          reject(error);
        }
        return;
      }
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, headerEnd));
      const body = received.subarray(headerEnd + 4);
      if (length?.[1] !== undefined && body.length < Number(length[1]) && error === undefined) return;
      isDone = true;
      socket.destroy();
      resolve({ status: Number(status[1]), body: body.toString("utf8") });
    };
    const writeMore = (): void => {
      while (sent < upload.totalBytes && !isDone && !socket.destroyed && socket.writable) {
        const size = Math.min(chunk.length, upload.totalBytes - sent);
        sent += size;
        const piece = size === chunk.length ? chunk : chunk.subarray(0, size);
        const framed = upload.isLengthDeclared ? piece : Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece, Buffer.from("\r\n")]);
        // A write into a connection the server closed fails through the error event.
        if (!socket.write(framed, () => undefined)) {
          socket.once("drain", writeMore);
          return;
        }
      }
      if (!upload.isLengthDeclared && !isDone && socket.writable) socket.write("0\r\n\r\n", () => undefined);
    };
    socket.on("data", (data: Buffer) => {
      received = Buffer.concat([received, data]);
      finish();
    });
    socket.on("error", (error) => finish(error));
    socket.once("close", () => finish(new Error(`the server closed the connection without an answer after ${sent} bytes`)));
    socket.once("connect", () => {
      const framing = upload.isLengthDeclared ? `content-length: ${upload.totalBytes}` : "transfer-encoding: chunked";
      const headers = Object.entries({ host: url.host, ...upload.headers }).map(([name, value]) => `${name}: ${value}\r\n`).join("");
      socket.write(`POST ${upload.path} HTTP/1.1\r\n${headers}${framing}\r\n\r\n`);
      writeMore();
    });
  });
}
