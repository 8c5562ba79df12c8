/**
 * How the dev server answers errors: the JSON shape `{ "error": "<message>" }`
 * with a 4xx for anything the caller can fix, and a 500 only for the
 * unexpected, whose details stay in the server log.
 */
import {
  ChannelMessageNotFoundError,
  FlowAlreadyExistsError,
  FlowNotFoundError,
  FlowNotRunningError,
  InvalidInputError,
  InvalidResumeTokenError,
  RpcLockConflictError,
  ValueTooLargeError,
} from "@perdure/engine";
import { QueuedUserMessagesFullError } from "@perdure/agents";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

/** Refused by the authorization hook. */
export class ForbiddenError extends Error {}

/** The status for an error the caller caused, or null for an unexpected one. */
function statusOf(error: unknown): 400 | 403 | 404 | 409 | null {
  if (error instanceof ForbiddenError) return 403;
  if (FlowNotFoundError.isInstance(error)) return 404;
  // An existing or stopped session, a message to a finished one, or a decision racing a running Step.
  if (FlowAlreadyExistsError.isInstance(error) || FlowNotRunningError.isInstance(error) || RpcLockConflictError.isInstance(error) || ChannelMessageNotFoundError.isInstance(error)) return 409;
  // Too many messages already wait for the running turn: the session is busy, not the request malformed.
  if (QueuedUserMessagesFullError.isInstance(error)) return 409;
  if (InvalidInputError.isInstance(error) || InvalidResumeTokenError.isInstance(error) || ValueTooLargeError.isInstance(error)) return 400;
  return null;
}

/** Hono's `onError` for the dev app. */
export function answerDevAppError(error: Error, context: Context): Response {
  if (error instanceof HTTPException) return context.json({ error: error.message || "bad request" }, error.status);
  const status = statusOf(error);
  if (status !== null) return context.json({ error: error.message }, status);
  console.error("perdure dev:", error);
  return context.json({ error: "internal error; see the server log" }, 500);
}
