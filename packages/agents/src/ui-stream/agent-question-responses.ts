/**
 * Answers to questions from the browser: reading them from the assistant
 * message the browser sends back, and applying one with `answer_question`,
 * or with `resolve_interrupt` for a decline.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import { isBlankText } from "../contract/values/result-texts.ts";
import { turnIdOfMessageId } from "./agent-tool-approvals.ts";
import { personLockConflictRetryMs } from "../session/rpcs/person-lock-conflict-retry.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";

/** The most question responses a request is read for; the rest are ignored. */
export const maxAgentQuestionResponses = 100;

/** One response to a question from the browser, bound to the turn of the message it came from. */
export interface AgentQuestionResponse {
  /** The question's interrupt ID: the `id` of its `data-agent-question` part. */
  interruptId: string;
  /** The answer; null for a decline. */
  answer: string | null;
  /** A decline's message, which the model sees; ignored for an answer. */
  reason?: string;
  /** The turn of the message the response came from, or null when the message is not a turn's. */
  turnId: string | null;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A response from untrusted JSON: `{ answer }` or `{ declined: true, reason? }`; undefined when it is neither. */
function readResponse(interruptId: unknown, response: unknown, turnId: unknown): AgentQuestionResponse | undefined {
  const value = asRecord(response);
  if (typeof interruptId !== "string" || interruptId === "" || value === undefined) return undefined;
  const boundTurnId = typeof turnId === "string" ? turnId : null;
  if (typeof value.answer === "string") return { interruptId, answer: value.answer, turnId: boundTurnId };
  if (value.declined !== true) return undefined;
  return { interruptId, answer: null, ...(typeof value.reason === "string" ? { reason: value.reason } : {}), turnId: boundTurnId };
}

/**
 * The question responses of an assistant message from the browser: its
 * `data-agent-question` parts that carry a `response`, at most 100, each
 * bound to the turn of the message. The message is untrusted JSON; anything
 * malformed is skipped.
 *
 * @example
 * // In the browser: answer a question part, then send the message back.
 * setMessages((messages) => messages.map((message) => ({
 *   ...message,
 *   parts: message.parts.map((part) => (part.type === "data-agent-question" && part.id === interruptId
 *     ? { ...part, data: { ...part.data, response: { answer: "M" } } } : part)),
 * })));
 * void sendMessage();
 *
 * // On the server, in POST /api/chat:
 * const questionResponses = readAgentQuestionResponses(messages.at(-1));
 */
export function readAgentQuestionResponses(message: unknown): AgentQuestionResponse[] {
  const object = asRecord(message);
  if (object === undefined || !Array.isArray(object.parts)) return [];
  const turnId = object.role === "assistant" || object.role === undefined ? turnIdOfMessageId(object.id) : null;
  const responses: AgentQuestionResponse[] = [];
  for (const value of object.parts as unknown[]) {
    if (responses.length >= maxAgentQuestionResponses) break;
    const part = asRecord(value);
    if (part?.type !== "data-agent-question") continue;
    const data = asRecord(part.data);
    const response = readResponse(data?.interruptId ?? part.id, data?.response, turnId);
    if (response !== undefined) responses.push(response);
  }
  return responses;
}

/**
 * The first 100 responses, keeping the first per interrupt ID. Responses
 * that arrive from anywhere but {@link readAgentQuestionResponses} are
 * checked here too.
 */
export function selectAgentQuestionResponses(responses: readonly unknown[]): AgentQuestionResponse[] {
  if (!Array.isArray(responses)) throw new InvalidInputError("questionResponses must be an array: pass what readAgentQuestionResponses returned");
  const seen = new Set<string>();
  const selected: AgentQuestionResponse[] = [];
  for (const value of responses.slice(0, maxAgentQuestionResponses)) {
    const response = asRecord(value);
    if (response === undefined) continue;
    const parsed = readResponse(response.interruptId, response.answer === null ? { declined: true, reason: response.reason } : { answer: response.answer }, response.turnId);
    if (parsed === undefined || seen.has(parsed.interruptId)) continue;
    seen.add(parsed.interruptId);
    selected.push(parsed);
  }
  return selected;
}

/** How a response fared. */
export type AgentQuestionResponseOutcome =
  | { kind: "applied" }
  /** No question with this ID is pending in the active turn (answered, expired, another turn's, or unknown). */
  | { kind: "not_pending" }
  /** The question is pending, but the session refused the answer: the reason, for the browser. */
  | { kind: "refused"; interrupt: AgentInterrupt; reason: string };

/** Why `answer_question` refuses an answer to a pending question, in words for the person. */
function refusalReason(interrupt: AgentInterrupt, answer: string): string {
  if (isBlankText(answer)) return "the answer is blank";
  const choices = interrupt.choices ?? [];
  const allowsFreeText = interrupt.allowsFreeText ?? interrupt.choices === undefined;
  if (!allowsFreeText && !choices.includes(answer)) return `the answer must be one of: ${choices.join(", ")}`;
  return "the session did not accept the answer";
}

/** Applies one response if its question is pending in the active turn, retrying while a Step holds `PendingInterrupts`. */
export async function applyAgentQuestionResponse(
  session: AgentUIStreamSession,
  response: { interruptId: string; answer: string | null; reason?: string | undefined; turnId?: string | undefined },
  signal?: AbortSignal,
): Promise<AgentQuestionResponseOutcome> {
  const { client, flow, flowId } = session;
  const [state, pending] = await client.getAttributes(flowId, flow.agentState, flow.pendingInterrupts);
  const activeTurnId = state?.activeTurnId ?? null;
  if (activeTurnId === null || (response.turnId !== undefined && response.turnId !== activeTurnId)) return { kind: "not_pending" };
  const interrupt = (pending ?? []).find((candidate) => candidate.interruptId === response.interruptId && candidate.kind === "question" && candidate.turnId === activeTurnId);
  if (interrupt === undefined) return { kind: "not_pending" };
  const { answer } = response;
  const retry = { lockConflictRetryMs: personLockConflictRetryMs, signal };
  const isApplied = answer === null
    ? await client.invokeRPC(flow.resolveInterrupt, flowId, { interruptId: interrupt.interruptId, approved: false, rejectionMessage: response.reason ?? null }, retry)
    : await client.invokeRPC(flow.answerQuestion, flowId, { interruptId: interrupt.interruptId, answer }, retry);
  if (isApplied) return { kind: "applied" };
  // Refused: still pending (a bad answer) or resolved meanwhile (its deadline, another tab).
  const [after] = await client.getAttributes(flowId, flow.pendingInterrupts);
  const stillPending = (after ?? []).find((candidate) => candidate.interruptId === interrupt.interruptId);
  return stillPending === undefined || answer === null ? { kind: "not_pending" } : { kind: "refused", interrupt: stillPending, reason: refusalReason(stillPending, answer) };
}

/** Options of {@link answerAgentQuestion}. */
export interface AnswerAgentQuestionOptions extends AgentUIStreamSessionOptions {
  /** The question's interrupt ID. */
  interruptId: string;
  /** The answer, or null to decline the question. */
  answer: string | null;
  /** A decline's message, which the model sees; ignored for an answer. @default none */
  reason?: string | undefined;
  /** Apply the response only while this turn is the active one. @default the active turn, whichever it is */
  turnId?: string | undefined;
}

/**
 * Answers a question with `answer_question`, or declines it with
 * `resolve_interrupt`, when it is pending in the active turn (and in
 * `turnId`, when given); true when the session took it. For applications
 * that keep one stream open (`finishWhenAwaitingApproval: false`) and answer
 * from their own route.
 *
 * @example
 * const isAnswered = await answerAgentQuestion({ client, flow, flowId, interruptId: "call-7", answer: "Medium" });
 */
export async function answerAgentQuestion(options: AnswerAgentQuestionOptions): Promise<boolean> {
  return (await respondToAgentQuestion(options)).answered;
}

/** What {@link respondToAgentQuestion} returns: whether the session took the response, and why not. */
export type AgentQuestionAnswerResult = { answered: true } | { answered: false; reason: string };

/**
 * {@link answerAgentQuestion} that says why a response was not taken, in
 * words for the person who answered: the question is not pending (answered,
 * declined, expired, or of another turn), or the session refused the answer
 * (blank, or not one of the choices of a question without free text).
 *
 * @example
 * const result = await respondToAgentQuestion({ client, flow, flowId, interruptId: "call-7", answer: "XXL" });
 * if (!result.answered) console.log(result.reason); // "the answer must be one of: S, M, L"
 */
export async function respondToAgentQuestion(options: AnswerAgentQuestionOptions): Promise<AgentQuestionAnswerResult> {
  const session = resolveAgentUIStreamSession(options);
  if (typeof options.interruptId !== "string" || options.interruptId === "") throw new InvalidInputError(`interruptId ${describeValue(options.interruptId)} is invalid: pass the question's interrupt ID`);
  if (options.answer !== null && typeof options.answer !== "string") throw new InvalidInputError(`answer ${describeValue(options.answer)} is invalid: pass the answer's text, or null to decline`);
  const outcome = await applyAgentQuestionResponse(session, {
    interruptId: options.interruptId,
    answer: options.answer,
    reason: options.reason,
    turnId: options.turnId,
  });
  switch (outcome.kind) {
    case "applied": return { answered: true };
    case "refused": return { answered: false, reason: outcome.reason };
    case "not_pending": return { answered: false, reason: `question ${options.interruptId} is not waiting for an answer: it was answered, declined or expired, or its turn ended` };
  }
}
