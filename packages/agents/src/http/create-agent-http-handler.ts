/**
 * The session HTTP API as one Fetch handler. Every request passes, in order:
 * the `Host`, origin and content-type guard; CORS for allowed origins; the
 * path check and the route table; `authorize`, before any body is read; the
 * route, which reads its body within its limit and reaches only the caller's
 * sessions. Errors a caller can fix answer 4xx with a message that names the
 * bad value; the unexpected answer 500 and go to `onUnexpectedError`.
 */
import { describeValue } from "@perdure/engine";
import { guardAgentRequest } from "../ui-stream/agent-request-guard.ts";
import { resolveAgentHttpHandlerOptions, type AgentHttpCaller, type AgentHttpHandlerOptions, type ResolvedAgentHttpHandlerOptions } from "./agent-http-options.ts";
import type { AgentHttpRoute } from "./agent-http-route.ts";
import { agentHttpRoutes } from "./agent-http-routes.ts";
import { readBoundedJsonObject } from "./bounded-body.ts";
import { answerPreflight, withCorsHeaders } from "./cors.ts";
import { HttpRefusal, jsonError, responseOfError } from "./http-refusal.ts";
import { compileRoutePath, matchRoutePath, type CompiledRoutePath } from "./route-path.ts";
import { findOwnedSession } from "./session-owner.ts";

/** A Fetch handler: what Hono, Next.js route handlers, Bun, Deno and `@hono/node-server` all call. */
export type AgentHttpHandler = (request: Request) => Promise<Response>;

const compiledRoutes: readonly { route: AgentHttpRoute; compiled: CompiledRoutePath }[] = agentHttpRoutes.map((route) => ({ route, compiled: compileRoutePath(route.path) }));

function shortPath(pathname: string): string {
  return pathname.length > 200 ? `${pathname.slice(0, 199)}…` : pathname;
}

async function callerOf(options: ResolvedAgentHttpHandlerOptions, request: Request, route: AgentHttpRoute, sessionId: string | undefined): Promise<AgentHttpCaller | Response> {
  const answer = await options.authorize({ request, action: route.action, ...(sessionId === undefined ? {} : { sessionId }) });
  if (answer instanceof Response) return answer;
  if (typeof answer !== "object" || answer === null || typeof answer.principal !== "string" || answer.principal === "") {
    throw new TypeError(`authorize returned ${describeValue(answer)} for ${route.action}: return { principal: "<non-empty string>" } or a Response that refuses`);
  }
  return answer;
}

async function answer(options: ResolvedAgentHttpHandlerOptions, request: Request): Promise<Response> {
  const refusal = guardAgentRequest(request, { allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins });
  if (refusal !== null) return refusal;
  if (request.method === "OPTIONS") return answerPreflight(request, options.allowedOrigins);
  const { pathname } = new URL(request.url);
  try {
    decodeURIComponent(pathname);
  } catch {
    return jsonError(400, `path ${describeValue(pathname)} has a malformed percent-encoding`);
  }
  const { basePath } = options;
  const routePath = pathname === basePath ? "/" : pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : undefined;
  const method = request.method === "HEAD" ? "GET" : request.method;
  let matched: { route: AgentHttpRoute; params: Record<string, string> } | undefined;
  for (const { route, compiled } of routePath === undefined ? [] : compiledRoutes) {
    const params = route.method === method ? matchRoutePath(compiled, routePath ?? "") : null;
    if (params !== null) {
      matched = { route, params };
      break;
    }
  }
  if (matched === undefined) return jsonError(404, `no route ${request.method} ${shortPath(pathname)}`);
  const { route, params } = matched;
  let caller: AgentHttpCaller | null = null;
  if (route.isPublic !== true) {
    const authorized = await callerOf(options, request, route, params.id);
    if (authorized instanceof Response) return authorized;
    caller = authorized;
  }
  const maxBytes = route.bodyLimit === "chat" ? options.maxChatBodyBytes : options.maxBodyBytes;
  return route.handle({
    request,
    options,
    caller,
    params,
    readBody: () => readBoundedJsonObject(request, maxBytes),
    ownedSession: (sessionId) => {
      if (caller === null) throw new HttpRefusal(404, `session ${sessionId} not found`);
      return findOwnedSession(options, caller, sessionId);
    },
  });
}

/**
 * The whole session API that `perdure dev` serves, as one Fetch handler:
 * create and list sessions, chat for `useChat` with resume, plain SSE
 * events, snapshots and messages, approvals, questions, plans, steering,
 * the queue, cancel, settings, stop and inspection; `GET /openapi.json`
 * describes it. Each session belongs to the principal that created it;
 * another principal gets a 404, as for a session that does not exist.
 * Options are checked here: a handler without `authorize` is refused.
 *
 * @example
 * const handler = createAgentHttpHandler({
 *   client: new Client({ store }),
 *   flows: [supportAgent],
 *   basePath: "/api",
 *   authorize: async ({ request }) => {
 *     const user = await userOfSessionCookie(request);
 *     return user === null ? Response.json({ error: "sign in first" }, { status: 401 }) : { principal: user.id };
 *   },
 * });
 * // Hono: app.all("/api/*", (context) => handler(context.req.raw));
 * // Next.js app/api/[...path]/route.ts: export const GET = handler, POST = handler;
 */
export function createAgentHttpHandler(options: AgentHttpHandlerOptions): AgentHttpHandler {
  const resolved = resolveAgentHttpHandlerOptions(options);
  return async (request) => {
    let response: Response;
    try {
      response = await answer(resolved, request);
    } catch (error) {
      response = responseOfError(error, request, resolved.onUnexpectedError);
    }
    return withCorsHeaders(response, request, resolved.allowedOrigins);
  };
}
