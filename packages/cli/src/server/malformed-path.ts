/** Refusing a path whose percent-encoding does not decode (400), before any route or file lookup. */
import { describeValue } from "@perdure/engine";
import type { MiddlewareHandler } from "hono";

/** Refuses a path whose percent-encoding does not decode (400), before any route or file lookup. */
export const rejectMalformedPath: MiddlewareHandler = async (context, next) => {
  const { pathname } = new URL(context.req.url);
  try {
    decodeURIComponent(pathname);
  } catch {
    return context.json({ error: `path ${describeValue(pathname)} has a malformed percent-encoding` }, 400);
  }
  return next();
};
