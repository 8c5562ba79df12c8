/**
 * How the dev server answers errors outside the session API (the web UI's
 * files): `{ "error": "<message>" }` with the status of a refusal, and a 500
 * only for the unexpected, whose details stay in the server log. The API's
 * own errors are answered by `@perdure/agents/http`.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

/** Hono's `onError` for the dev app. */
export function answerDevAppError(error: Error, context: Context): Response {
  if (error instanceof HTTPException) return context.json({ error: error.message || "bad request" }, error.status);
  console.error("perdure dev:", error);
  return context.json({ error: "internal error; see the server log" }, 500);
}
