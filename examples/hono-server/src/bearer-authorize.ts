/**
 * Bearer-token authorization for the session HTTP API: each token names a
 * principal. Tokens come from configuration (`HONO_SERVER_TOKENS`), are
 * compared in constant time, and a request without a known token gets a
 * 401 with a `WWW-Authenticate` header.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { AgentHttpAuthorize } from "@perdure/agents/http";

/** The least length of a token: shorter ones are guessable. */
const minimumTokenLength = 16;

/**
 * Reads `principal=token` pairs separated by commas, such as
 * `alice=4f1c…,bob=9a7e…`. Refuses an empty list, a malformed pair, a short
 * token and a token given twice, naming the bad entry (never the token).
 */
export function parseTokens(text: string): Map<string, string> {
  const principalsByToken = new Map<string, string>();
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  if (entries.length === 0) throw new Error("no tokens configured: set HONO_SERVER_TOKENS to principal=token pairs separated by commas");
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf("=");
    const principal = entry.slice(0, separator).trim();
    const token = entry.slice(separator + 1).trim();
    if (separator <= 0 || !/^[\w.@-]+$/.test(principal)) throw new Error(`token entry ${index + 1} is not principal=token with a principal of letters, digits, ".", "@", "_" or "-"`);
    if (token.length < minimumTokenLength) throw new Error(`the token of ${principal} is shorter than ${minimumTokenLength} characters`);
    if (principalsByToken.has(token)) throw new Error(`the token of ${principal} is also another principal's token`);
    principalsByToken.set(token, principal);
  }
  return principalsByToken;
}

/** SHA-256, so every comparison is of two 32-byte values whatever the token's length. */
function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** An `authorize` that admits a request carrying `Authorization: Bearer <token>` with a configured token. */
export function bearerTokenAuthorize(principalsByToken: ReadonlyMap<string, string>): AgentHttpAuthorize {
  const known = [...principalsByToken].map(([token, principal]) => ({ digest: digest(token), principal }));
  const refuse = (error: string): Response => Response.json({ error }, { status: 401, headers: { "www-authenticate": 'Bearer realm="perdure"' } });
  return ({ request }) => {
    const header = request.headers.get("authorization");
    if (header === null) return refuse("send Authorization: Bearer <token>");
    const match = /^Bearer ([\x21-\x7e]+)$/i.exec(header);
    if (match?.[1] === undefined) return refuse("the Authorization header is not Bearer <token>");
    const presented = digest(match[1]);
    // Compare against every token, so the time taken does not tell which one matched.
    let principal: string | undefined;
    for (const candidate of known) {
      if (timingSafeEqual(candidate.digest, presented)) principal = candidate.principal;
    }
    return principal === undefined ? refuse("unknown token") : { principal };
  };
}
