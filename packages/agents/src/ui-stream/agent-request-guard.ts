/**
 * A same-origin guard for the HTTP routes that serve agent sessions to a
 * browser. Other web pages open in the same browser can send requests to
 * them, and a DNS-rebinding page can even read the answers; this guard
 * refuses both before anything is parsed.
 */
import { describeValue } from "@perdure/engine";
import { createJsonErrorResponse } from "./server-sent-event-responses.ts";

/** Options of {@link guardAgentRequest}. */
export interface AgentRequestGuardOptions {
  /**
   * The `Host` header values the server answers to, each `name:port` as a
   * browser sends it: `127.0.0.1:4100`, `localhost:4100`, `[::1]:4100`.
   * `"any"` turns the check off; do that only where every request must
   * carry a secret that a rebinding page cannot have (a token).
   */
  allowedHosts: readonly string[] | "any";
  /**
   * Origins besides the server's own that may send state-changing requests,
   * such as `http://localhost:5173` for a front end served apart.
   * @default []
   */
  allowedOrigins?: readonly string[] | undefined;
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);
const sameOriginFetchSites = new Set(["same-origin", "none"]);

/** The media type of a `Content-Type` header, lowercased, without its parameters. */
function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Checks a request before its body is read: its `Host` must be one the
 * server answers to (421 otherwise), and a state-changing request (any
 * method but GET, HEAD and OPTIONS) must come from the server's own origin
 * or an allowed one (403) and carry `application/json` (415), which a plain
 * HTML form cannot send and which a cross-origin script may send only after
 * a CORS preflight the server does not grant. Requests from programs
 * without `Origin` and `Sec-Fetch-Site` (curl, SDKs) pass the origin check:
 * authenticate them separately.
 *
 * Returns the refusal as a JSON error response, or null to go on.
 *
 * @example
 * const refusal = guardAgentRequest(request, { allowedHosts: ["127.0.0.1:3000", "localhost:3000"] });
 * if (refusal !== null) return refusal;
 */
export function guardAgentRequest(request: Request, options: AgentRequestGuardOptions): Response | null {
  const url = new URL(request.url);
  const host = (request.headers.get("host") ?? url.host).toLowerCase();
  if (options.allowedHosts !== "any" && !options.allowedHosts.some((allowed) => allowed.toLowerCase() === host)) {
    return createJsonErrorResponse(421, `host ${describeValue(host)} is not served here: use ${options.allowedHosts.join(" or ")}`);
  }
  if (safeMethods.has(request.method)) return null;
  const origin = request.headers.get("origin");
  const ownOrigin = `${url.protocol}//${host}`;
  if (origin !== null) {
    if (origin !== ownOrigin && !(options.allowedOrigins ?? []).includes(origin)) {
      return createJsonErrorResponse(403, `origin ${describeValue(origin)} may not change sessions here; only ${ownOrigin} and allowed origins may`);
    }
  } else {
    const fetchSite = request.headers.get("sec-fetch-site");
    if (fetchSite !== null && !sameOriginFetchSites.has(fetchSite)) {
      return createJsonErrorResponse(403, `a ${describeValue(fetchSite)} request may not change sessions here`);
    }
  }
  const mediaType = mediaTypeOf(request.headers.get("content-type"));
  if (mediaType !== "application/json") {
    return createJsonErrorResponse(415, `content type ${describeValue(mediaType === "" ? null : mediaType)} is not accepted: send application/json`);
  }
  return null;
}
