/**
 * The approval route's stream: applies the browser's approval decisions and
 * question responses, and streams the rest of the turn into the same message.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import { agentTurnMessageId, closeForNewResponse, planAgentEventParts, type PlannedStandalonePart } from "./agent-event-parts.ts";
import { findTurnOrigin, isEventPositionAccepted } from "./agent-event-stream-positions.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import { followAgentTurn, type AgentUIStreamContext } from "./agent-ui-stream-cursor.ts";
import { agentUIStreamSource, openAgentUIStreamRun, turnStartPosition } from "./agent-ui-stream-run.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";
import { copyAgentUIStreamState, type AgentUIStreamState } from "./agent-ui-stream-state.ts";
import { isAgentUIStreamTokenRejection, type AgentUIStreamPosition } from "./agent-ui-stream-token.ts";
import { applyAgentToolApprovalDecision, selectAgentToolApprovalDecisions, type AgentToolApprovalResponse } from "./agent-tool-approvals.ts";
import { applyAgentQuestionResponse, selectAgentQuestionResponses, type AgentQuestionResponse } from "./agent-question-responses.ts";
import { questionChunkFromInterrupt, toolCallIdOfQuestion } from "./agent-ui-data-parts.ts";
import { questionOutcomeChunk } from "./question-outcome-chunks.ts";
import { createUIMessageStreamSseResponse } from "./server-sent-event-responses.ts";
import { toolOutcomeChunk } from "./tool-outcome-chunks.ts";

/** Options of {@link resolveAgentToolApprovalsWithUIMessageStream}. */
export interface ResolveAgentToolApprovalsWithUIMessageStreamOptions extends AgentUIStreamSessionOptions {
  /** The decisions, as {@link readAgentToolApprovalResponses} read them from the browser's message. */
  approvals: readonly AgentToolApprovalResponse[];
  /**
   * The answers and declines of questions, as {@link readAgentQuestionResponses}
   * read them from the same message.
   * @default []
   */
  questionResponses?: readonly AgentQuestionResponse[] | undefined;
  /**
   * The paused stream's latest resume token, when the browser sends it: the
   * rest of the turn continues exactly after it. Without it the stream
   * continues after the turn's newest event.
   * @default none
   */
  resumeToken?: string | undefined;
  /** Finish with `tool-calls` when the turn again waits only for approvals and questions. @default true */
  finishWhenAwaitingApproval?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Where the rest of a turn continues for a browser that holds the turn's
 * message: after the paused stream's token when it is this turn's and
 * accepted, else after the turn's newest event, with the state a stream that
 * sent every event so far would have. The browser's new response has no open
 * text or reasoning part.
 */
async function continuationStart(context: AgentUIStreamContext, turnId: string, resumeToken: string | undefined): Promise<AgentUIStreamPosition> {
  const { session, tokens } = context;
  if (resumeToken !== undefined && resumeToken !== "") {
    const decoded = tokens.decode(session.flowId, resumeToken);
    if (!isAgentUIStreamTokenRejection(decoded) && decoded.turnId === turnId && decoded.partsSent === 0 && await isEventPositionAccepted(session, decoded.after)) {
      return { ...decoded, state: closeForNewResponse(decoded.state) };
    }
  }
  let position = turnStartPosition(turnId, (await findTurnOrigin(session, turnId)).origin);
  for (;;) {
    const read = await session.client.readStream(session.flowId, session.flow.agentEvents, { limit: 1000, ...(position.after === null ? {} : { after: position.after }) });
    let state = position.state;
    for (const message of read.messages) {
      if (message.value.turnId === turnId) state = planAgentEventParts(state, message.value).state;
    }
    position = { ...position, after: read.nextToken ?? position.after, state };
    if (read.messages.length < 1000) {
      // The browser holds the turn's message; without any retained event, the turn's events were lost.
      const isStarted = position.state.started;
      // Its last stream finished with `tool-calls`, which closed the step.
      return { ...position, state: { ...closeForNewResponse(position.state), started: true, stepOpen: false, eventsLost: position.state.eventsLost || !isStarted } };
    }
  }
}

/**
 * The part that tells the browser a decision it sent was not applied: the
 * call's outcome when it has one, nothing while the call is still in
 * progress (its events follow), else an error on the call's part, so
 * `sendAutomaticallyWhen` does not send the decision again.
 */
async function decisionOutcomePart(context: AgentUIStreamContext, decision: AgentToolApprovalResponse): Promise<AgentUIMessageChunk | undefined> {
  const toolCallId = decision.toolCallId;
  if (toolCallId === null) return undefined;
  const outcome = decision.turnId === null ? { kind: "unknown" as const } : await context.records.readToolOutcomeNow(decision.turnId, toolCallId);
  if (outcome.kind === "unknown") {
    return { type: "tool-output-error", toolCallId, errorText: `approval ${decision.approvalId} is no longer pending, so the decision was not applied`, dynamic: true };
  }
  return toolOutcomeChunk(toolCallId, outcome);
}

/** A question response that was not applied, and the question when the session refused its answer. */
interface UnappliedQuestionResponse {
  response: AgentQuestionResponse;
  refusal: { interrupt: AgentInterrupt; reason: string } | null;
}

/**
 * The part that tells the browser a question response was not applied: the
 * question again with the refusal's reason while it is still pending, else
 * how it ended by committed state, or nothing while its call moves on.
 */
async function responseOutcomePart(context: AgentUIStreamContext, unapplied: UnappliedQuestionResponse): Promise<AgentUIMessageChunk | undefined> {
  const { response, refusal } = unapplied;
  if (refusal !== null) {
    const question = questionChunkFromInterrupt(refusal.interrupt);
    return { ...question, data: { ...question.data, error: refusal.reason } };
  }
  const toolCallId = toolCallIdOfQuestion(response.interruptId, null);
  const record = response.turnId === null ? undefined : await context.records.readRecord(response.turnId, toolCallId);
  return questionOutcomeChunk(response.interruptId, toolCallId, record);
}

/**
 * The prelude of a stream that continues a turn's message: `start` with the
 * message's ID, as the AI SDK's own `toUIMessageStream` opens a response
 * that continues the last assistant message, then the outcomes of decisions
 * and responses that were not applied.
 */
async function planDecisionOutcomes(
  context: AgentUIStreamContext,
  turnId: string,
  state: AgentUIStreamState,
  decisions: readonly AgentToolApprovalResponse[],
  responses: readonly UnappliedQuestionResponse[] = [],
): Promise<PlannedStandalonePart[]> {
  const items: PlannedStandalonePart[] = [{ part: { kind: "chunk", chunk: { type: "start", messageId: agentTurnMessageId(turnId) } }, state: copyAgentUIStreamState(state) }];
  const chunks = [
    ...await Promise.all(decisions.map((decision) => decisionOutcomePart(context, decision))),
    ...await Promise.all(responses.map((response) => responseOutcomePart(context, response))),
  ];
  for (const chunk of chunks) {
    if (chunk !== undefined) items.push({ part: { kind: "chunk", chunk }, state: copyAgentUIStreamState(state) });
  }
  return items;
}

/**
 * The approval route's response. Reads at most 100 decisions and 100
 * question responses, keeping the first per interrupt ID; calls
 * `resolve_interrupt` or `answer_question` only for interrupts pending in
 * the active turn, and only for decisions bound to that turn; then streams
 * the rest of the turn into the same message. A decision that is no longer
 * pending gets the call's outcome, or an error on its part; a question
 * response gets the question's resolution, or the question again with the
 * reason the session refused the answer. When the decisions' turn is not the
 * active one (a stale tab), nothing is applied and the stream finishes with
 * reason `other` after the outcomes.
 *
 * @example
 * // POST /api/chat whose last message is the assistant's
 * return resolveAgentToolApprovalsWithUIMessageStream({
 *   client, flow, flowId: id,
 *   approvals: readAgentToolApprovalResponses(lastMessage),
 *   questionResponses: readAgentQuestionResponses(lastMessage),
 *   signal: request.signal,
 * });
 */
export async function resolveAgentToolApprovalsWithUIMessageStream(options: ResolveAgentToolApprovalsWithUIMessageStreamOptions): Promise<Response> {
  const session = resolveAgentUIStreamSession(options);
  const decisions = selectAgentToolApprovalDecisions(options.approvals);
  const responses = selectAgentQuestionResponses(options.questionResponses ?? []);
  if (options.finishWhenAwaitingApproval !== undefined && typeof options.finishWhenAwaitingApproval !== "boolean") {
    throw new InvalidInputError(`finishWhenAwaitingApproval ${describeValue(options.finishWhenAwaitingApproval)} is invalid: use true or false`);
  }
  const run = await openAgentUIStreamRun(session, { isFinishingWhenAwaitingApproval: options.finishWhenAwaitingApproval ?? true, signal: options.signal });
  const { context } = run;
  const [state] = await session.client.getAttributes(session.flowId, session.flow.agentState);
  const activeTurnId = state?.activeTurnId ?? null;
  const messageTurnId = [...decisions, ...responses].find((decision) => decision.turnId !== null)?.turnId ?? null;
  if (activeTurnId !== null && messageTurnId === activeTurnId) {
    // The position first: every event of an applied decision comes after it.
    const start = await continuationStart(context, activeTurnId, options.resumeToken);
    const notApplied: AgentToolApprovalResponse[] = [];
    const awaitedToolCallIds: string[] = [];
    for (const decision of decisions) {
      const isBound = decision.turnId === activeTurnId;
      const outcome = isBound ? await applyAgentToolApprovalDecision(session, { ...decision, turnId: activeTurnId }, context.signal) : "not_pending";
      if (outcome !== "applied") notApplied.push(decision);
      else if (decision.toolCallId !== null) awaitedToolCallIds.push(decision.toolCallId);
    }
    const unanswered: UnappliedQuestionResponse[] = [];
    for (const response of responses) {
      const outcome = response.turnId === activeTurnId
        ? await applyAgentQuestionResponse(session, { ...response, turnId: activeTurnId }, context.signal)
        : { kind: "not_pending" as const };
      if (outcome.kind === "applied") awaitedToolCallIds.push(toolCallIdOfQuestion(response.interruptId, null));
      else unanswered.push({ response, refusal: outcome.kind === "refused" ? { interrupt: outcome.interrupt, reason: outcome.reason } : null });
    }
    const prelude = await planDecisionOutcomes(context, activeTurnId, start.state, notApplied, unanswered);
    const items = followAgentTurn(context, start, prelude, { awaitedToolCallIds });
    return createUIMessageStreamSseResponse(agentUIStreamSource(run, items, `${session.flowId} ${activeTurnId}`));
  }
  const turnId = messageTurnId ?? activeTurnId ?? "";
  const start = turnStartPosition(turnId, null);
  const started = { ...start.state, started: true, eventsLost: true };
  const prelude = await planDecisionOutcomes(context, turnId, started, decisions, responses.map((response) => ({ response, refusal: null })));
  prelude.push({ part: { kind: "chunk", chunk: { type: "finish", finishReason: "other" } }, state: { ...started, done: true } });
  return createUIMessageStreamSseResponse(agentUIStreamSource(run, followAgentTurn(context, { ...start, state: started }, prelude), `${session.flowId} ${turnId}`));
}
