/**
 * The web server: a Hono app that mounts the session HTTP API under `/api`
 * with bearer-token authorization, and its own page at `/`. It holds a
 * Client on the store and runs no Steps: `perdure worker` does that, beside
 * it on the same SQLite file.
 */
import { Client, type Store } from "@perdure/engine";
import { createAgentHttpHandler } from "@perdure/agents/http";
import { Hono } from "hono";
import { orderDeskAgent } from "./agents.ts";
import { bearerTokenAuthorize } from "./bearer-authorize.ts";

/** Options of {@link createServerApp}. */
export interface ServerAppOptions {
  store: Store;
  /** Principals by token, as `parseTokens` reads them. */
  principalsByToken: ReadonlyMap<string, string>;
  /** Browser origins that may call the API (CORS). @default none: only non-browser clients */
  allowedOrigins?: readonly string[];
}

/** The Hono app: `GET /` and the session API under `/api`. */
export function createServerApp(options: ServerAppOptions): Hono {
  const handler = createAgentHttpHandler({
    client: new Client({ store: options.store }),
    flows: [orderDeskAgent],
    basePath: "/api",
    authorize: bearerTokenAuthorize(options.principalsByToken),
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
  });
  const app = new Hono();
  app.get("/", (context) => context.text("Perdure behind Hono: the session API is under /api (see /api/openapi.json); send Authorization: Bearer <token>.\n"));
  app.all("/api/*", (context) => handler(context.req.raw));
  return app;
}
