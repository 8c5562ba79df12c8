/**
 * The built web UI: its files through Hono's static middleware (which refuses
 * traversal and malformed paths), and `index.html` for every other page path
 * so the browser's router can take it.
 */
import { join } from "node:path";
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono } from "hono";

/** Adds the web UI's routes to `app`; call it after the API routes. */
export function serveWebUI(app: Hono, webRoot: string): void {
  app.get("*", serveStatic({ root: webRoot }));
  app.get("*", serveStatic({ path: join(webRoot, "index.html") }));
  app.get("*", (context) => context.json({ error: "the web UI is not built; run npm run build:web" }, 404));
}
