/**
 * Reading a request body with a size limit enforced while it is read: a
 * declared `Content-Length` over the limit is refused before a byte is read,
 * and a chunked body is cut the moment it passes the limit, so no body is
 * ever buffered beyond it.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import { HttpRefusal } from "./http-refusal.ts";

function tooLarge(maxBytes: number): HttpRefusal {
  return new HttpRefusal(413, `request body is over ${maxBytes} bytes`);
}

/** The body as text, at most `maxBytes` bytes of it. */
export async function readBoundedText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stop reading without cancelling: cancelling can reset the connection before the 413 is written.
      // The server decides what happens to the rest (perdure dev reads a bounded amount, then closes).
      reader.releaseLock();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** The body as a JSON object, at most `maxBytes` bytes of it. */
export async function readBoundedJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const text = await readBoundedText(request, maxBytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidInputError("request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidInputError(`request body ${describeValue(body)} is invalid: send a JSON object`);
  }
  return body as Record<string, unknown>;
}
