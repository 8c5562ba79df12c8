import type { ToolEffect } from "./tool-effect.ts";
import { isToolEffect } from "./tool-effect.ts";
import { isToolCallCancellationReason, type ToolCallCancellationReason } from "./turn-control.ts";
import { asWireObject, compact, readBoolean, readNullableString, readNumber, readString, type WireObject } from "./wire.ts";

/** The six statuses a runner sees. */
export type AgentToolCallStatus = "awaiting_approval" | "approved" | "succeeded" | "failed" | "rejected" | "outcome_unknown";

/** Stored records may also wait on an answer, a Timer or a tool task. */
export type AgentToolCallRecordStatus = AgentToolCallStatus | "awaiting_answer" | "waiting_for_timer" | "waiting_for_task";

export const finalToolCallStatuses: readonly AgentToolCallStatus[] = ["succeeded", "failed", "rejected", "outcome_unknown"];

/** One tool call of the active turn. */
export interface AgentToolCall {
  toolCallId: string;
  toolName: string;
  /** The model's arguments, as JSON text. */
  arguments: string;
  effect: ToolEffect;
  requiresApproval: boolean;
  status: AgentToolCallStatus;
  /** The text the model sees once the call is final, or null. */
  output: string | null;
  /** Why the call failed or was rejected, or null. */
  error: string | null;
  turnId: string;
  /** Zero-based position in the model response that made it. */
  deferralOrder: number;
  /** Opaque text of the tool's source, stored as given. */
  toolSourceReference?: string;
  /** The W3C `traceparent` of the activation root this call's tool spans join; absent without tracing. */
  traceContext?: string;
  startedAt?: string;
  finishedAt?: string;
  /** ISO 8601 time a `durable_wait` call's Timer fires. */
  waitUntil?: string;
  /** The continuation of the tool's latest question, handed back on the call's next run. */
  inputContinuation?: string;
  /** The answers to the tool's own questions, oldest first. */
  inputAnswers?: QuestionAnswer[];
  /** The question the tool asked, while the record is `awaiting_answer`. */
  inputQuestion?: string;
  /** The choices of that question; absent for free text only. */
  inputChoices?: string[];
  /** Whether that question takes any text besides the choices. */
  inputAllowsFreeText?: boolean;
  /** Set when steering or `cancel_turn` stopped the call: `"steered"` or `"turn_cancelled"`. */
  cancellationReason?: ToolCallCancellationReason;
  /** The handle of the remote work the tool started (`ToolTaskStarted.taskId`). */
  taskId?: string;
  /** Seconds until the task's next poll, a whole number from 1 to 86,400. */
  taskPollIntervalSeconds?: number;
  /** True while a task's question was resolved and the next poll hands the resolution over. */
  taskAnswerPending?: boolean;
  /** True for a call that starts a sub-agent session and counted toward `maxSubAgentsPerTurn`. */
  startsSubAgent?: boolean;
}

/** An answer to one of a tool's own questions. */
export interface QuestionAnswer {
  /** `<toolCallId>-input-<n>`. */
  interruptId: string;
  /** `answered`, or for a tool task `declined` or `deadline_passed`. */
  resolution: "answered" | "declined" | "deadline_passed";
  /** The user's text, or null when the question was not answered. */
  answer: string | null;
}

/**
 * Whether a person approved the call and it then ran to a final status
 * (succeeded, failed, or outcome unknown): its UI part shows the approval.
 */
export function wasApprovedAndRun(record: { requiresApproval: boolean; status: string }): boolean {
  return record.requiresApproval && (record.status === "succeeded" || record.status === "failed" || record.status === "outcome_unknown");
}

/** A stored record: a call whose status may also be one of the waiting statuses. */
export interface AgentToolCallRecord extends Omit<AgentToolCall, "status"> {
  status: AgentToolCallRecordStatus;
}

const recordStatuses: readonly AgentToolCallRecordStatus[] = [
  "awaiting_approval", "approved", "succeeded", "failed", "rejected", "outcome_unknown", "awaiting_answer", "waiting_for_timer", "waiting_for_task",
];

export function isFinalToolCallStatus(status: AgentToolCallRecordStatus): boolean {
  return (finalToolCallStatuses as readonly string[]).includes(status);
}

export function agentToolCallToWire(call: AgentToolCallRecord): WireObject {
  return compact({
    tool_call_id: call.toolCallId,
    tool_name: call.toolName,
    arguments: call.arguments,
    effect: call.effect,
    requires_approval: call.requiresApproval,
    status: call.status,
    output: call.output,
    error: call.error,
    turn_id: call.turnId,
    deferral_order: call.deferralOrder,
    tool_source_reference: call.toolSourceReference,
    trace_context: call.traceContext,
    started_at: call.startedAt,
    finished_at: call.finishedAt,
    wait_until: call.waitUntil,
    input_continuation: call.inputContinuation,
    input_answers: call.inputAnswers?.map(questionAnswerToWire),
    input_question: call.inputQuestion,
    input_choices: call.inputChoices,
    input_allows_free_text: call.inputAllowsFreeText,
    cancellation_reason: call.cancellationReason,
    task_id: call.taskId,
    task_poll_interval_seconds: call.taskPollIntervalSeconds,
    task_answer_pending: call.taskAnswerPending,
    starts_sub_agent: call.startsSubAgent,
  });
}

export function agentToolCallFromWire(data: unknown): AgentToolCallRecord {
  const object = asWireObject(data, "AgentToolCallRecord");
  const status = readString(object, "status", "approved");
  const effect = object.effect;
  const call: AgentToolCallRecord = {
    toolCallId: readString(object, "tool_call_id", ""),
    toolName: readString(object, "tool_name", ""),
    arguments: readString(object, "arguments", "{}"),
    effect: isToolEffect(effect) ? effect : "unclassified",
    requiresApproval: readBoolean(object, "requires_approval", false),
    status: (recordStatuses as readonly string[]).includes(status) ? (status as AgentToolCallRecordStatus) : "approved",
    output: readNullableString(object, "output"),
    error: readNullableString(object, "error"),
    turnId: readString(object, "turn_id", ""),
    deferralOrder: readNumber(object, "deferral_order", 0),
  };
  const reference = readNullableString(object, "tool_source_reference");
  const startedAt = readNullableString(object, "started_at");
  const finishedAt = readNullableString(object, "finished_at");
  if (reference !== null) call.toolSourceReference = reference;
  const traceContext = readNullableString(object, "trace_context");
  if (traceContext !== null) call.traceContext = traceContext;
  if (startedAt !== null) call.startedAt = startedAt;
  if (finishedAt !== null) call.finishedAt = finishedAt;
  readWaitingFields(object, call);
  return call;
}

function questionAnswerToWire(answer: QuestionAnswer): WireObject {
  return { interrupt_id: answer.interruptId, resolution: answer.resolution, answer: answer.answer };
}

function questionAnswerFromWire(data: unknown): QuestionAnswer {
  const object = asWireObject(data, "QuestionAnswer");
  const resolution = readString(object, "resolution", "answered");
  return {
    interruptId: readString(object, "interrupt_id", ""),
    resolution: resolution === "declined" || resolution === "deadline_passed" ? resolution : "answered",
    answer: readNullableString(object, "answer"),
  };
}

/** The fields of waiting records; each is absent while unset, so older records decode unchanged. */
function readWaitingFields(object: WireObject, call: AgentToolCallRecord): void {
  const waitUntil = readNullableString(object, "wait_until");
  const continuation = readNullableString(object, "input_continuation");
  const question = readNullableString(object, "input_question");
  if (waitUntil !== null) call.waitUntil = waitUntil;
  if (continuation !== null) call.inputContinuation = continuation;
  if (Array.isArray(object.input_answers)) call.inputAnswers = object.input_answers.map(questionAnswerFromWire);
  if (question !== null) call.inputQuestion = question;
  if (Array.isArray(object.input_choices)) call.inputChoices = object.input_choices.filter((choice): choice is string => typeof choice === "string");
  if (typeof object.input_allows_free_text === "boolean") call.inputAllowsFreeText = object.input_allows_free_text;
  if (isToolCallCancellationReason(object.cancellation_reason)) call.cancellationReason = object.cancellation_reason;
  const taskId = readNullableString(object, "task_id");
  if (taskId !== null) call.taskId = taskId;
  if (typeof object.task_poll_interval_seconds === "number" && Number.isFinite(object.task_poll_interval_seconds)) call.taskPollIntervalSeconds = object.task_poll_interval_seconds;
  if (object.task_answer_pending === true) call.taskAnswerPending = true;
  if (object.starts_sub_agent === true) call.startsSubAgent = true;
}
