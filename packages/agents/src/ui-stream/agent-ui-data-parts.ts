/**
 * The data parts that carry what the AI SDK has no part for: questions the
 * session waits on, their resolutions, durable waits and the plan. Each has a
 * stable `id`, so the AI SDK client replaces a part it already holds instead
 * of adding another, and a replayed turn rebuilds the same parts.
 * docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md
 */
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import { questionDeadlinePassed } from "../contract/values/result-texts.ts";
import type { AgentQuestionChunk, AgentQuestionResolution, AgentQuestionResolutionChunk, AgentTimerChunk } from "../contract/ui-stream/data-parts.ts";

function stringOf(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/**
 * The question part of an `interrupt_raised` payload of kind `question`, or
 * undefined when the payload lacks its IDs.
 */
export function questionChunkFromPayload(payload: Record<string, unknown>): AgentQuestionChunk | undefined {
  const interruptId = stringOf(payload.interrupt_id);
  const toolCallId = stringOf(payload.tool_call_id);
  if (interruptId === null || toolCallId === null) return undefined;
  const choices = Array.isArray(payload.choices) ? payload.choices.filter((choice): choice is string => typeof choice === "string") : [];
  return {
    type: "data-agent-question",
    id: interruptId,
    data: {
      interruptId,
      toolCallId,
      toolName: stringOf(payload.tool_name) ?? "",
      question: stringOf(payload.question) ?? "",
      choices,
      // As answer_question decides: free text unless choices restrict it.
      allowsFreeText: typeof payload.allows_free_text === "boolean" ? payload.allows_free_text : !Array.isArray(payload.choices),
      deadline: stringOf(payload.deadline),
    },
  };
}

/** The question part of a pending question interrupt, for snapshots and for requests the stream has not shown. */
export function questionChunkFromInterrupt(interrupt: AgentInterrupt): AgentQuestionChunk {
  const choices = interrupt.choices ?? [];
  return {
    type: "data-agent-question",
    id: interrupt.interruptId,
    data: {
      interruptId: interrupt.interruptId,
      toolCallId: interrupt.toolCallId,
      toolName: interrupt.toolName,
      question: interrupt.question ?? "",
      choices,
      allowsFreeText: interrupt.allowsFreeText ?? interrupt.choices === undefined,
      deadline: interrupt.deadline,
    },
  };
}

/** The resolution part of an `interrupt_resolved` payload of a question, or undefined when it lacks its ID. */
export function questionResolutionChunkFromPayload(payload: Record<string, unknown>, toolCallId: string): AgentQuestionResolutionChunk | undefined {
  const interruptId = stringOf(payload.interrupt_id);
  if (interruptId === null) return undefined;
  const rejectionMessage = stringOf(payload.rejection_message);
  const cancellationReason = stringOf(payload.cancellation_reason);
  const resolution: AgentQuestionResolution = payload.answered === true
    ? "answered"
    : cancellationReason !== null
      ? "cancelled"
      : rejectionMessage === questionDeadlinePassed
        ? "deadline_passed"
        : "declined";
  return { type: "data-agent-question-resolution", id: interruptId, data: { interruptId, toolCallId, resolution, rejectionMessage, cancellationReason } };
}

/** The timer part of a `timer_started` payload, or undefined when it lacks its fields. */
export function timerChunkFromPayload(payload: Record<string, unknown>): AgentTimerChunk | undefined {
  const toolCallId = stringOf(payload.tool_call_id);
  const waitUntil = stringOf(payload.wait_until);
  if (toolCallId === null || waitUntil === null) return undefined;
  return { type: "data-agent-timer", id: toolCallId, data: { toolCallId, waitUntil, reason: stringOf(payload.reason) ?? "" } };
}

/** The tool call a question interrupt belongs to: `<toolCallId>-input-<n>` names its tool's call, any other ID is an `ask_user` call's own. */
export function toolCallIdOfQuestion(interruptId: string, toolCallId: string | null): string {
  if (toolCallId !== null) return toolCallId;
  const match = /^(.*)-input-\d+$/.exec(interruptId);
  return match?.[1] ?? interruptId;
}
