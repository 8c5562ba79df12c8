/**
 * The data parts that carry what the AI SDK has no part for: questions the
 * session waits on, their resolutions, durable waits and the plan. Each has a
 * stable `id`, so the AI SDK client replaces a part it already holds instead
 * of adding another, and a replayed turn rebuilds the same parts.
 * docs/decisions/2026-12-03-questions-and-plans-in-ui-streams.md
 */
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import type { AgentPlanStatus, AgentPlanTask } from "../contract/values/agent-plan.ts";
import { questionDeadlinePassed } from "../contract/values/result-texts.ts";
import type { AgentMcpTaskStatusChunk, AgentMcpToolProgressChunk } from "./mcp-data-parts.ts";
import type { AgentToolTaskChunk } from "./tool-task-data-parts.ts";
import type { AgentTurnControlChunk } from "./turn-control-data-parts.ts";

/** What the browser sends back on a question part: an answer, or a decline. */
export type AgentQuestionResponseData =
  | { answer: string }
  | { declined: true; reason?: string };

/** A question the session waits for a person to answer (`ask_user`, or a tool's own question). */
export interface AgentQuestionData {
  /** The interrupt ID: the tool call ID for `ask_user`, `<toolCallId>-input-<n>` for a tool's question. */
  interruptId: string;
  toolCallId: string;
  /** `ask_user`, or the tool that asks. */
  toolName: string;
  question: string;
  /** The choices offered; empty when any text is the answer. */
  choices: string[];
  /** Whether an answer outside `choices` is accepted. */
  allowsFreeText: boolean;
  /** ISO 8601 time after which the question is no longer answered, or null. */
  deadline: string | null;
  /**
   * Set by the browser only: its answer or decline, sent back in the
   * assistant message through the approval route. The stream never sets it.
   */
  response?: AgentQuestionResponseData;
  /**
   * Set by the stream only, when the session refused the browser's answer
   * (blank, or outside the choices): why, for the person. The question is
   * still pending.
   */
  error?: string;
}

/**
 * How a question was resolved. `cancelled`: steering or `cancel_turn`
 * removed it. `no_longer_pending`: the browser answered a question that was
 * not pending any more and committed state does not say how it ended.
 */
export type AgentQuestionResolution = "answered" | "declined" | "deadline_passed" | "cancelled" | "no_longer_pending";

/** A question's end, in a part of its own beside the question. */
export interface AgentQuestionResolutionData {
  interruptId: string;
  toolCallId: string;
  resolution: AgentQuestionResolution;
  /** The decline's message the model sees, or `question deadline passed`; null otherwise. */
  rejectionMessage: string | null;
  /** `steered` or `turn_cancelled` for a cancelled question; null otherwise. */
  cancellationReason: string | null;
}

/** A `durable_wait` call's timer. */
export interface AgentTimerData {
  toolCallId: string;
  /** ISO 8601 time the wait ends. */
  waitUntil: string;
  reason: string;
}

/** The session's plan after a `plan_updated` event. */
export interface AgentPlanData {
  revision: number;
  status: AgentPlanStatus;
  taskCount: number;
  /** The plan's tasks when the committed plan still has this revision; null once a later one replaced it. */
  tasks: AgentPlanTask[] | null;
}

/** `data-agent-question`, with the interrupt ID as its `id`. */
export interface AgentQuestionChunk {
  type: "data-agent-question";
  id: string;
  data: AgentQuestionData;
}

/** `data-agent-question-resolution`, with the interrupt ID as its `id`. */
export interface AgentQuestionResolutionChunk {
  type: "data-agent-question-resolution";
  id: string;
  data: AgentQuestionResolutionData;
}

/** `data-agent-timer`, with the tool call ID as its `id`. */
export interface AgentTimerChunk {
  type: "data-agent-timer";
  id: string;
  data: AgentTimerData;
}

/** `data-agent-plan`, always with the `id` {@link agentPlanPartId}. */
export interface AgentPlanChunk {
  type: "data-agent-plan";
  id: string;
  data: AgentPlanData;
}

/** The data parts of an agent UI message stream; the same shapes are message parts. */
export type AgentDataChunk =
  | AgentQuestionChunk
  | AgentQuestionResolutionChunk
  | AgentTimerChunk
  | AgentPlanChunk
  | AgentToolTaskChunk
  | AgentTurnControlChunk
  | AgentMcpToolProgressChunk
  | AgentMcpTaskStatusChunk;

/** The `id` of every plan part, so a later revision replaces the earlier one in the message. */
export const agentPlanPartId = "agent-plan";

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
