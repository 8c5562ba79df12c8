/**
 * CORS for the front ends named in `allowedOrigins`: preflights are
 * answered, and every answer to an allowed origin carries the headers a
 * browser needs to read it with credentials. Other origins get no CORS
 * headers, so their scripts cannot read the answers.
 */
import { agentResumeTokenHeaderName } from "../ui-stream/agent-ui-stream-token.ts";

const allowedHeaders = ["content-type", "authorization", agentResumeTokenHeaderName, "last-event-id"].join(", ");

function allowedOriginOf(request: Request, allowedOrigins: readonly string[]): string | null {
  const origin = request.headers.get("origin");
  return origin !== null && allowedOrigins.includes(origin) ? origin : null;
}

/** The answer to an `OPTIONS` request: 204, with CORS headers for an allowed origin. */
export function answerPreflight(request: Request, allowedOrigins: readonly string[]): Response {
  const origin = allowedOriginOf(request, allowedOrigins);
  if (origin === null) return new Response(null, { status: 204 });
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers": allowedHeaders,
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}

/** `response` with CORS headers when the request came from an allowed origin. */
export function withCorsHeaders(response: Response, request: Request, allowedOrigins: readonly string[]): Response {
  const origin = allowedOriginOf(request, allowedOrigins);
  if (origin === null || request.method === "OPTIONS") return response;
  let answer = response;
  try {
    answer.headers.set("access-control-allow-origin", origin);
  } catch {
    // A redirect from `authorize` has immutable headers: answer with a copy.
    answer = new Response(response.body, response);
    answer.headers.set("access-control-allow-origin", origin);
  }
  answer.headers.set("access-control-allow-credentials", "true");
  answer.headers.append("vary", "Origin");
  return answer;
}
