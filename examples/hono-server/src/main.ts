/**
 * Starts the web server on a SQLite file. Run `perdure worker` beside it on
 * the same file (`npm run worker`) to run the sessions' Steps.
 *
 *   HONO_SERVER_TOKENS='alice=<token>,bob=<token>' PERDURE_DB=hono-server.db PORT=8787 npm start
 */
import { serve } from "@hono/node-server";
import { SqliteStore } from "@perdure/engine/sqlite";
import { parseTokens } from "./bearer-authorize.ts";
import { createServerApp } from "./server.ts";

function portOf(text: string | undefined): number {
  const port = Number(text ?? "8787");
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT ${JSON.stringify(text)} is not a port number (0 to 65535)`);
  return port;
}

const principalsByToken = parseTokens(process.env["HONO_SERVER_TOKENS"] ?? "");
const port = portOf(process.env["PORT"]);
const hostname = process.env["HOST"] ?? "127.0.0.1";
const store = SqliteStore.open({ path: process.env["PERDURE_DB"] ?? "hono-server.db" });
const allowedOrigins = process.env["HONO_SERVER_ALLOWED_ORIGINS"]?.split(",").filter((origin) => origin !== "");
const app = createServerApp({ store, principalsByToken, ...(allowedOrigins === undefined ? {} : { allowedOrigins }) });

const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
  console.log(`hono-server: listening on http://${hostname}:${info.port} for ${[...new Set(principalsByToken.values())].join(", ")}`);
});

const stop = (): void => {
  server.close(() => {
    void store.close().then(() => process.exit(0));
  });
  // Open event streams would hold the close up: end them (clients resume from their last event).
  if ("closeAllConnections" in server) server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
