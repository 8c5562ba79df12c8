/**
 * How the handler answers errors: `{ "error": "<message>" }` with a 4xx for
 * anything the caller can fix, and a 500 without details for the unexpected,
 * which goes to `onUnexpectedError`.
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
import { QueuedUserMessagesFullError } from "../session/queued-user-messages-full-error.ts";

/** A refusal with its HTTP status, thrown by a route. */
export class HttpRefusal extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpRefusal";
    this.status = status;
  }
}

/** A JSON error response. */
export function jsonError(status: number, message: string): Response {
  return Response.json({ error: message }, { status });
}

/** The status for an error the caller caused, or null for an unexpected one. */
function statusOf(error: unknown): number | null {
  if (error instanceof HttpRefusal) return error.status;
  if (FlowNotFoundError.isInstance(error)) return 404;
  // An existing or stopped session, a message to a finished one, or a decision racing a running Step.
  if (FlowAlreadyExistsError.isInstance(error) || FlowNotRunningError.isInstance(error) || RpcLockConflictError.isInstance(error) || ChannelMessageNotFoundError.isInstance(error)) return 409;
  // Too many messages already wait for the running turn: the session is busy, not the request malformed.
  if (QueuedUserMessagesFullError.isInstance(error)) return 409;
  if (InvalidInputError.isInstance(error) || InvalidResumeTokenError.isInstance(error) || ValueTooLargeError.isInstance(error)) return 400;
  return null;
}

/** The response for an error a route threw. */
export function responseOfError(error: unknown, request: Request, onUnexpectedError: (error: unknown, request: Request) => void): Response {
  const status = statusOf(error);
  if (status !== null && error instanceof Error) return jsonError(status, error.message);
  onUnexpectedError(error, request);
  return jsonError(500, "internal error; see the server log");
}
