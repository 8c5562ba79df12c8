/**
 * The dev server: the session HTTP API of `@perdure/agents/http` under
 * `/api`, and the web UI, as a Hono app. Every request passes, in order: the
 * Host check and, for state-changing requests, the same-origin and
 * content-type guard; CORS preflights of allowed origins; the access check
 * (loopback callers, or the access token); the path check. Only then does
 * the handler (which checks the same guards again, reads bodies within their
 * limits and serves each session to its owner) or the web UI answer.
 */
import type { AgentSessionFlow } from "@perdure/agents";
import { createAgentHttpHandler, loopbackPrincipal, type AgentHttpAuthorize, type AgentHttpHandler } from "@perdure/agents/http";
import { guardAgentRequest } from "@perdure/agents/ui-stream";
import type { Client, PerdureLogger } from "@perdure/engine";
import { Hono } from "hono";
import { devAccessMiddleware, isLoopbackHostHeader, type DevAccess } from "./dev-access.ts";
import { answerDevAppError } from "./dev-app-errors.ts";
import { rejectMalformedPath } from "./malformed-path.ts";
import { serveWebUI } from "./serve-web-ui.ts";

/** Options of {@link createDevApp}. */
export interface DevAppOptions {
  client: Client;
  /** Agent session Flows by Flow type; the first is the default for new sessions. */
  flows: ReadonlyMap<string, AgentSessionFlow>;
  /** Who may call at all: the access token, or loopback callers only. */
  access: DevAccess;
  /** The `Host` header values served; "any" only with an access token. */
  allowedHosts: readonly string[] | "any";
  /**
   * Origins of separate front ends that may call the API (CORS and the
   * same-origin guard admit them).
   * @default []
   */
  allowedOrigins?: readonly string[];
  /**
   * Who the caller is, per request, as `createAgentHttpHandler` takes it.
   * @default every admitted caller is the one local user, "local"
   */
  authorize?: AgentHttpAuthorize;
  /** Folder of the built web UI; absent means API only. */
  webRoot?: string;
  /** The logger of unexpected errors and readiness changes. @default console.error */
  logger?: PerdureLogger;
  /** The Worker that `/api/readyz` checks. @default no Worker check */
  worker?: { readonly isClaiming: boolean };
}

/** The handler under `/api`: loopback-only hosts serve "anyone-on-loopback"; a token-guarded server admits the token's holder as the same local user. */
function createDevHandler(options: DevAppOptions): AgentHttpHandler {
  const { allowedHosts } = options;
  const isLoopbackOnly = options.access.token === null && allowedHosts !== "any" && allowedHosts.every(isLoopbackHostHeader);
  return createAgentHttpHandler({
    client: options.client,
    flows: options.flows,
    basePath: "/api",
    authorize: options.authorize ?? (isLoopbackOnly ? "anyone-on-loopback" : () => ({ principal: loopbackPrincipal })),
    allowedHosts,
    allowedOrigins: options.allowedOrigins ?? [],
    // Sessions of `perdure chat` and of older stores record no owner; they are the local user's.
    serveUnownedSessions: true,
    // The Events tab shows when each event was written.
    includeEventWriteTimes: true,
    ...(options.logger === undefined ? { onUnexpectedError: (error: unknown) => console.error("perdure dev:", error) } : { logger: options.logger }),
    ...(options.worker === undefined ? {} : { readiness: { worker: options.worker } }),
  });
}

/** The dev server's HTTP API and web UI, as a Hono app of Fetch handlers. */
export function createDevApp(options: DevAppOptions): Hono {
  const allowedOrigins = options.allowedOrigins ?? [];
  const handler = createDevHandler(options);
  const app = new Hono();
  app.onError(answerDevAppError);
  app.use(async (context, next) => guardAgentRequest(context.req.raw, { allowedHosts: options.allowedHosts, allowedOrigins }) ?? next());
  // A browser sends CORS preflights without credentials: they carry no data, and the handler answers them.
  app.options("/api/*", (context) => handler(context.req.raw));
  app.use(devAccessMiddleware(options.access));
  app.use(rejectMalformedPath);
  app.all("/api", (context) => handler(context.req.raw));
  app.all("/api/*", (context) => handler(context.req.raw));
  if (options.webRoot !== undefined) serveWebUI(app, options.webRoot);
  return app;
}
