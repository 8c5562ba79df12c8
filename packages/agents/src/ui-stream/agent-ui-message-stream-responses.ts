/**
 * The `useChat` routes' streams: reconnect to a turn, and send a user message
 * and follow the turn that answers it.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import { isBlankText } from "../contract/values/result-texts.ts";
import { checkClientMessageId } from "../contract/values/agent-user-message.ts";
import { findTurnOrigin, isEventPositionAccepted, readNewestEventPosition } from "./agent-event-stream-positions.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import { followAgentTurn, type AgentUIStreamContext } from "./agent-ui-stream-cursor.ts";
import { agentUIStreamSource, openAgentUIStreamRun, turnStartPosition } from "./agent-ui-stream-run.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";
import { isAgentUIStreamTokenRejection, type AgentUIStreamPosition } from "./agent-ui-stream-token.ts";
import { createAgentUIMessageChunkStream, createJsonErrorResponse, createUIMessageStreamSseResponse } from "./server-sent-event-responses.ts";

/** Options of {@link createAgentUIMessageStreamResponse} and {@link streamAgentUIMessageChunks}. */
export interface AgentUIMessageStreamOptions extends AgentUIStreamSessionOptions {
  /**
   * The latest `data-agent-resume-token` the browser received. The stream
   * replays that token's turn from its first retained event; a missing or
   * rejected token replays the active turn.
   * @default none: the active turn
   */
  resumeToken?: string | undefined;
  /**
   * Continue exactly after the token's part instead of replaying the turn.
   * Only while the browser still holds that message: with `useChat`, while
   * `status` is `"error"` after a dropped connection.
   * @default false
   */
  continueAfterResumeToken?: boolean | undefined;
  /**
   * Finish with reason `tool-calls` while the turn waits only for approvals,
   * so `sendAutomaticallyWhen` can send the answers. With `false` the stream
   * stays open; resolve approvals with `resolveAgentToolApproval`.
   * @default true
   */
  finishWhenAwaitingApproval?: boolean | undefined;
  /** Stops the stream, such as the request's signal when the browser disconnects. */
  signal?: AbortSignal | undefined;
}

/** Options of {@link sendAgentUserMessageWithUIMessageStream}. */
export interface SendAgentUserMessageWithUIMessageStreamOptions extends AgentUIStreamSessionOptions {
  /** The user's message. */
  text: string;
  /**
   * Send it as a plan-mode message: its turn writes a draft plan with
   * `write_todos` for the person to approve. The session refuses it unless
   * its agent has `planModeEnabled`.
   * @default false
   */
  planMode?: boolean | undefined;
  /**
   * The ID the client gave the message (the `useChat` message's `id`): the
   * session keeps it, and `readAgentSessionUIMessages` returns the stored
   * message under it. 1 to 128 characters, no control characters; anything
   * else is answered with 400.
   * @default none: the stored message's ID is `message-<sequence>`
   */
  messageId?: string | undefined;
  /** See {@link AgentUIMessageStreamOptions.finishWhenAwaitingApproval}. @default true */
  finishWhenAwaitingApproval?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

interface ResolvedStreamOptions {
  resumeToken: string | undefined;
  isContinuingAfterResumeToken: boolean;
  isFinishingWhenAwaitingApproval: boolean;
  signal: AbortSignal | undefined;
}

function resolveBoolean(name: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value !== undefined && typeof value !== "boolean") throw new InvalidInputError(`${name} ${describeValue(value)} is invalid: use true or false`);
  return value ?? fallback;
}

/** Checks the stream options and fills in every default (written once, here and in the TSDoc above). */
function resolveAgentUIMessageStreamOptions(options: AgentUIMessageStreamOptions): ResolvedStreamOptions {
  if (options.resumeToken !== undefined && typeof options.resumeToken !== "string") {
    throw new InvalidInputError(`resumeToken ${describeValue(options.resumeToken)} is invalid: pass the token text or undefined`);
  }
  return {
    resumeToken: options.resumeToken === "" ? undefined : options.resumeToken,
    isContinuingAfterResumeToken: resolveBoolean("continueAfterResumeToken", options.continueAfterResumeToken, false),
    isFinishingWhenAwaitingApproval: resolveBoolean("finishWhenAwaitingApproval", options.finishWhenAwaitingApproval, true),
    signal: options.signal,
  };
}

/**
 * Where a reconnect starts. A token's turn replays from its origin, or the
 * stream continues after the token's part; a position the engine rejects
 * restarts the turn from its first retained event. Without an accepted token,
 * the active turn replays; null when no turn is active.
 */
async function resolveStreamStart(context: AgentUIStreamContext, options: ResolvedStreamOptions): Promise<AgentUIStreamPosition | null> {
  const { session, tokens } = context;
  if (options.resumeToken !== undefined) {
    const decoded = tokens.decode(session.flowId, options.resumeToken);
    if (!isAgentUIStreamTokenRejection(decoded)) {
      const restart = turnStartPosition(decoded.turnId, decoded.turnOrigin);
      const candidate = options.isContinuingAfterResumeToken ? decoded : restart;
      if (await isEventPositionAccepted(session, candidate.after)) return candidate;
      if (candidate !== restart && await isEventPositionAccepted(session, restart.after)) return restart;
      return turnStartPosition(decoded.turnId, (await findTurnOrigin(session, decoded.turnId)).origin);
    }
  }
  const [state] = await session.client.getAttributes(session.flowId, session.flow.agentState);
  const turnId = state?.activeTurnId ?? null;
  if (turnId === null) return null;
  return turnStartPosition(turnId, (await findTurnOrigin(session, turnId)).origin);
}

/**
 * The parts of a reconnect as objects, each followed by its
 * `data-agent-resume-token` part, for `createUIMessageStreamResponse` or your
 * own response; null when there is no turn to follow.
 *
 * @example
 * import { createUIMessageStreamResponse } from "ai";
 * const stream = await streamAgentUIMessageChunks({ client, flow, flowId, resumeToken, signal: request.signal });
 * return stream === null ? new Response(null, { status: 204 }) : createUIMessageStreamResponse({ stream });
 */
export async function streamAgentUIMessageChunks(options: AgentUIMessageStreamOptions): Promise<ReadableStream<AgentUIMessageChunk> | null> {
  const session = resolveAgentUIStreamSession(options);
  const resolved = resolveAgentUIMessageStreamOptions(options);
  const run = await openAgentUIStreamRun(session, resolved);
  const start = await resolveStreamStart(run.context, resolved);
  if (start === null) return null;
  return createAgentUIMessageChunkStream(agentUIStreamSource(run, followAgentTurn(run.context, start), `${session.flowId} ${start.turnId}`));
}

/**
 * The `useChat` reconnect route's response: the token's turn (or the active
 * turn) as an AI SDK UI message stream, or 204 when no turn is active. Reads
 * the token's position once before it answers 200.
 *
 * @example
 * // GET /api/chat/:id/stream
 * return createAgentUIMessageStreamResponse({
 *   client, flow, flowId: sessionId,
 *   resumeToken: request.headers.get(agentResumeTokenHeaderName) ?? undefined,
 *   signal: request.signal,
 * });
 */
export async function createAgentUIMessageStreamResponse(options: AgentUIMessageStreamOptions): Promise<Response> {
  const session = resolveAgentUIStreamSession(options);
  const resolved = resolveAgentUIMessageStreamOptions(options);
  const run = await openAgentUIStreamRun(session, resolved);
  const start = await resolveStreamStart(run.context, resolved);
  if (start === null) return new Response(null, { status: 204 });
  return createUIMessageStreamSseResponse(agentUIStreamSource(run, followAgentTurn(run.context, start), `${session.flowId} ${start.turnId}`));
}

/**
 * Sends a user message with `send_user_message` and streams the next turn
 * that starts, which answers it unless other messages were queued first.
 * Answers 400 when the session refuses the message (blank text, or a
 * plan-mode message to an agent without plan mode).
 *
 * @example
 * // POST /api/chat with a user message
 * return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: id, text, signal: request.signal });
 */
export async function sendAgentUserMessageWithUIMessageStream(options: SendAgentUserMessageWithUIMessageStreamOptions): Promise<Response> {
  const session = resolveAgentUIStreamSession(options);
  if (typeof options.text !== "string") throw new InvalidInputError(`text ${describeValue(options.text)} is invalid: pass the user's message text`);
  if (options.planMode !== undefined && typeof options.planMode !== "boolean") throw new InvalidInputError(`planMode ${describeValue(options.planMode)} is invalid: use true or false`);
  const planMode = options.planMode === true;
  let clientMessageId: string | undefined;
  try {
    clientMessageId = checkClientMessageId(options.messageId);
  } catch (error) {
    return createJsonErrorResponse(400, `message ${(error as Error).message.replace(/^clientMessageId /, "id ")}`);
  }
  const resolved = resolveAgentUIMessageStreamOptions({ ...session, finishWhenAwaitingApproval: options.finishWhenAwaitingApproval, signal: options.signal });
  const run = await openAgentUIStreamRun(session, resolved);
  // The position before the state: a turn that starts in between is still read from its first event.
  const origin = await readNewestEventPosition(session);
  const [state] = await session.client.getAttributes(session.flowId, session.flow.agentState);
  const isAccepted = await session.client.invokeRPC(session.flow.sendUserMessage, session.flowId, { text: options.text, ...(planMode ? { planMode } : {}), ...(clientMessageId === undefined ? {} : { clientMessageId }) });
  if (!isAccepted) {
    return createJsonErrorResponse(400, planMode && !isBlankText(options.text)
      ? "the session refused the plan-mode message: its agent does not enable plan mode (planModeEnabled)"
      : "the session refused the message: its text is blank");
  }
  const turnId = `turn-${(state?.turnCount ?? 0) + 1}`;
  return createUIMessageStreamSseResponse(agentUIStreamSource(run, followAgentTurn(run.context, turnStartPosition(turnId, origin)), `${session.flowId} ${turnId}`));
}
