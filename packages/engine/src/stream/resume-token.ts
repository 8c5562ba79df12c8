import { describeValue } from "../errors/describe-value.ts";
import { createHmac, timingSafeEqual } from "node:crypto";
import { InvalidResumeTokenError } from "../errors/invalid-resume-token-error.ts";

/**
 * Longest resume token the engine accepts, in characters. The longest token
 * the engine issues (a 256-character flow ID of 4-byte characters and a
 * 128-character Stream name) stays well under it.
 */
export const maxResumeTokenLength = 4096;

interface TokenPayload {
  flowId: string;
  stream: string;
  index: number;
}

function sign(secret: Buffer, payload: string): string {
  return createHmac("sha256", secret).update(payload).digest("base64url").slice(0, 22);
}

/** Encodes a signed position in one Flow's Stream. */
export function encodeResumeToken(secret: Buffer, payload: TokenPayload): string {
  const body = Buffer.from(JSON.stringify([payload.flowId, payload.stream, payload.index])).toString("base64url");
  return `${body}.${sign(secret, body)}`;
}

/**
 * Decodes a resume token and checks it belongs to this Flow and Stream.
 * Throws `InvalidResumeTokenError` naming what is wrong.
 */
export function decodeResumeToken(secret: Buffer, token: string, expected: { flowId: string; stream: string }): number {
  if (typeof token !== "string" || token.length === 0 || token.length > maxResumeTokenLength) {
    throw new InvalidResumeTokenError(`resume token ${describeValue(String(token).slice(0, 40))} is invalid: expected a token from this store of at most ${maxResumeTokenLength} characters`);
  }
  const [body, signature, extra] = token.split(".");
  const expectedSignature = body === undefined ? "" : sign(secret, body);
  if (body === undefined || signature === undefined || extra !== undefined || signature.length !== expectedSignature.length
    || !timingSafeEqual(Buffer.from(signature), Buffer.from(expectedSignature))) {
    throw new InvalidResumeTokenError(`resume token ${describeValue(token.slice(0, 40))} was not issued by this store (forged or corrupt)`);
  }
  const parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as [string, string, number];
  const [flowId, stream, index] = parsed;
  if (flowId !== expected.flowId || stream !== expected.stream) {
    throw new InvalidResumeTokenError(
      `resume token belongs to Stream ${stream} of Flow ${flowId}, not Stream ${expected.stream} of Flow ${expected.flowId}`,
    );
  }
  return index;
}
