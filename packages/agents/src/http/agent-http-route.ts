/**
 * What a route of the session HTTP API is: a method, a path, the operation
 * it performs, what it may read, and the function that answers it with what
 * the handler already checked.
 */
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { AgentHttpAction } from "./agent-http-actions.ts";
import type { AgentHttpCaller, ResolvedAgentHttpHandlerOptions } from "./agent-http-options.ts";

/** A session the caller may use, with the Flow that serves it. */
export interface OwnedSession {
  sessionId: string;
  flow: AgentSessionFlow;
}

/** What a route's `handle` is given. */
export interface AgentHttpRouteContext {
  request: Request;
  options: ResolvedAgentHttpHandlerOptions;
  /** The caller as `authorize` returned it; `null` on public routes. */
  caller: AgentHttpCaller | null;
  /** The path's `:name` segments, percent-decoded. */
  params: Readonly<Record<string, string>>;
  /** The body as a JSON object, read within the route's size limit. */
  readBody(): Promise<Record<string, unknown>>;
  /** The session `sessionId` when the caller owns it; a 404 otherwise, the same as for a session that does not exist. */
  ownedSession(sessionId: string): Promise<OwnedSession>;
}

/** One route. */
export interface AgentHttpRoute {
  method: "GET" | "POST";
  /** Below the base path, with `:name` segments: `/sessions/:id/cancel`. */
  path: string;
  action: AgentHttpAction;
  /** Served without `authorize`: health and the API's description only. @default false */
  isPublic?: boolean;
  /** Which body limit applies; only on POST routes. */
  bodyLimit?: "chat" | "small";
  handle(context: AgentHttpRouteContext): Promise<Response> | Response;
}
