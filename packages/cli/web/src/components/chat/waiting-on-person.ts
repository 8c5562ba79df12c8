// What the chat's messages say about approvals and questions: whether the
// active turn waits for a person (so the chat does not poll it), whether
// this tab still offers a request the session no longer waits for (so the
// chat reads the session again), and whether the last message asks for one.
import type { UIMessage } from "ai";
import { questionOf, questionResolutionOf, type QuestionData } from "../../lib/agent-parts.ts";
import { asDynamicToolPart } from "./MessageList.tsx";

function approvalParts(message: UIMessage | undefined) {
  return (message?.parts ?? []).map(asDynamicToolPart).filter((tool) => tool?.state === "approval-requested" || tool?.state === "approval-responded");
}

/** Question parts of a message without a resolution part: still open, or answered by this tab and on their way. */
export function openQuestions(message: UIMessage | undefined): QuestionData[] {
  const parts = message?.parts ?? [];
  const resolved = new Set(parts.flatMap((part) => questionResolutionOf(part)?.interruptId ?? []));
  return parts.flatMap((part) => {
    const question = questionOf(part);
    return question === undefined || resolved.has(question.interruptId) ? [] : [question];
  });
}

/**
 * The message waits for a person: an approval or answer this tab sent, or a
 * request the session has pending (or that arrived after the last read of
 * the session, `isInspectedSince` false).
 */
export function isWaitingForPerson(message: UIMessage | undefined, pendingIds: ReadonlySet<string>, isInspectedSince: boolean): boolean {
  return approvalParts(message).some((tool) => tool?.state === "approval-responded" || (tool?.state === "approval-requested" && (pendingIds.has(tool.approval.id) || !isInspectedSince)))
    || openQuestions(message).some((question) => question.response !== undefined || pendingIds.has(question.interruptId) || !isInspectedSince);
}

/** An approval or question this tab still offers that the session no longer waits for. */
export function offersStaleRequest(messages: readonly UIMessage[], pendingIds: ReadonlySet<string>): boolean {
  return messages.some((message) => approvalParts(message).some((tool) => tool?.state === "approval-requested" && !pendingIds.has(tool.approval.id))
    || openQuestions(message).some((question) => question.response === undefined && !pendingIds.has(question.interruptId)));
}

/** The last message is the assistant's and asks for an approval or an answer. */
export function asksPerson(message: UIMessage | undefined): boolean {
  return message?.role === "assistant" && (message.parts.some((part) => asDynamicToolPart(part)?.state === "approval-requested") || openQuestions(message).length > 0);
}
