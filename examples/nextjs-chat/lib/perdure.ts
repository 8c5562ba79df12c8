/**
 * The session HTTP API of this app: a Client on the SQLite file the
 * `perdure worker` process runs Steps from (`PERDURE_DB`), and
 * `createAgentHttpHandler` under `/api` with an `authorize` that reads the
 * signed sign-in cookie. The web process runs no Steps. Built on the first
 * request, so `next build` opens no database.
 */
import { Client } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { createAgentHttpHandler, type AgentHttpHandler } from "@perdure/agents/http";
import { orderDeskAgent } from "../agents/agents.ts";
import { cookieOf, sessionCookieName, verifySessionCookie } from "./session-cookie.ts";

/** Kept on globalThis, so `next dev`'s module reloads reuse one store. */
const cache = globalThis as typeof globalThis & { perdureChatHandler?: AgentHttpHandler };

/** The handler, created on first use. */
export function sessionApi(): AgentHttpHandler {
  cache.perdureChatHandler ??= createAgentHttpHandler({
    client: new Client({ store: SqliteStore.open({ path: process.env["PERDURE_DB"] ?? "nextjs-chat.db" }) }),
    flows: [orderDeskAgent],
    basePath: "/api",
    authorize: ({ request }) => {
      const user = verifySessionCookie(cookieOf(request.headers.get("cookie"), sessionCookieName));
      return user === undefined ? Response.json({ error: "sign in first" }, { status: 401 }) : { principal: user };
    },
  });
  return cache.perdureChatHandler;
}
