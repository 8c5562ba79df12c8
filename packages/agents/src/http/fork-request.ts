/** The body of a fork request, as the session HTTP API and `perdure dev` read it. */
import { describeValue, InvalidInputError } from "@perdure/engine";
import { checkSessionId } from "./request-values.ts";

/** What `POST /sessions/:id/fork` asks for. */
export interface ForkSessionRequest {
  /** How many of the source's turns the fork keeps. */
  throughTurn: number;
  /** The fork's first message (edit and resend, retry); absent: the fork waits for one. */
  initialMessage?: string;
  /** The fork's ID; absent: a new one. */
  sessionId?: string;
}

/**
 * Reads `{ throughTurn, initialMessage?, sessionId? }` from a request body;
 * a bad value is an `InvalidInputError` that names it.
 *
 * @example
 * const request = readForkSessionRequest(await readBody()); // { throughTurn: 2, initialMessage: "Where is order 8?" }
 */
export function readForkSessionRequest(body: Record<string, unknown>, maxMessageBytes: number): ForkSessionRequest {
  const throughTurn = body.throughTurn;
  if (typeof throughTurn !== "number" || !Number.isSafeInteger(throughTurn) || throughTurn < 0) {
    throw new InvalidInputError(`throughTurn ${describeValue(throughTurn)} is invalid: use the number of turns the fork keeps, an integer from 0`);
  }
  const initialMessage = body.initialMessage;
  if (initialMessage !== undefined && (typeof initialMessage !== "string" || initialMessage.trim() === "")) {
    throw new InvalidInputError(`initialMessage ${describeValue(initialMessage)} is invalid: use the text of the fork's first message, or leave it out`);
  }
  if (typeof initialMessage === "string" && Buffer.byteLength(initialMessage) > maxMessageBytes) {
    throw new InvalidInputError(`initialMessage of ${Buffer.byteLength(initialMessage)} bytes is over the limit of ${maxMessageBytes}`);
  }
  return {
    throughTurn,
    ...(initialMessage === undefined ? {} : { initialMessage: initialMessage as string }),
    ...(body.sessionId === undefined ? {} : { sessionId: checkSessionId(body.sessionId) }),
  };
}

/** A new fork's ID when the request names none. */
export function newForkSessionId(): string {
  return `fork-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}
