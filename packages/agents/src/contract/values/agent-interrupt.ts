import { asWireObject, compact, readBoolean, readNullableString, readString, type WireObject } from "./wire.ts";

/** A human decision the session waits for: an approval of a tool call, or a question to answer. */
export type AgentInterruptKind = "approval" | "question";

export interface AgentInterrupt {
  interruptId: string;
  kind: AgentInterruptKind;
  toolCallId: string;
  toolName: string;
  /** The call's arguments as JSON text, so the person sees what they approve. */
  arguments: string;
  turnId: string;
  /** ISO 8601 time after which the interrupt is rejected, or null. */
  deadline: string | null;
  createdAt: string;
  /** A question's text; absent on approvals. */
  question?: string;
  /** A question's choices; absent when it takes free text only. */
  choices?: string[];
  /** Whether a question takes text outside its choices; absent on approvals. */
  allowsFreeText?: boolean;
}

/** How `resolve_interrupt` or `answer_question` resolved an interrupt. */
export interface AgentInterruptResolution {
  interruptId: string;
  /** True for an approval or an answer; false for a rejection or a declined question. */
  approved: boolean;
  rejectionMessage: string | null;
  resolvedAt: string;
  /** The answer `answer_question` gave; absent otherwise. */
  answer?: string;
}

/** The interrupt ID of a tool call's approval. */
export function approvalInterruptId(toolCallId: string): string {
  return `${toolCallId}-approval`;
}

/** The interrupt ID of a tool's `n`th question (1-based): `<toolCallId>-input-<n>`. */
export function toolInputInterruptId(toolCallId: string, questionNumber: number): string {
  return `${toolCallId}-input-${questionNumber}`;
}

export function agentInterruptToWire(interrupt: AgentInterrupt): WireObject {
  return compact({
    interrupt_id: interrupt.interruptId,
    kind: interrupt.kind,
    tool_call_id: interrupt.toolCallId,
    tool_name: interrupt.toolName,
    arguments: interrupt.arguments,
    turn_id: interrupt.turnId,
    deadline: interrupt.deadline,
    created_at: interrupt.createdAt,
    question: interrupt.question,
    choices: interrupt.choices,
    allows_free_text: interrupt.allowsFreeText,
  });
}

export function agentInterruptFromWire(data: unknown): AgentInterrupt {
  const object = asWireObject(data, "AgentInterrupt");
  const interrupt: AgentInterrupt = {
    interruptId: readString(object, "interrupt_id", ""),
    kind: readString(object, "kind", "approval") === "question" ? "question" : "approval",
    toolCallId: readString(object, "tool_call_id", ""),
    toolName: readString(object, "tool_name", ""),
    arguments: readString(object, "arguments", "{}"),
    turnId: readString(object, "turn_id", ""),
    deadline: readNullableString(object, "deadline"),
    createdAt: readString(object, "created_at", ""),
  };
  const question = readNullableString(object, "question");
  if (question !== null) interrupt.question = question;
  if (Array.isArray(object.choices)) interrupt.choices = object.choices.filter((choice): choice is string => typeof choice === "string");
  if (typeof object.allows_free_text === "boolean") interrupt.allowsFreeText = object.allows_free_text;
  return interrupt;
}

export function agentInterruptResolutionToWire(resolution: AgentInterruptResolution): WireObject {
  return compact({
    interrupt_id: resolution.interruptId,
    approved: resolution.approved,
    rejection_message: resolution.rejectionMessage,
    resolved_at: resolution.resolvedAt,
    answer: resolution.answer,
  });
}

export function agentInterruptResolutionFromWire(data: unknown): AgentInterruptResolution {
  const object = asWireObject(data, "AgentInterruptResolution");
  const resolution: AgentInterruptResolution = {
    interruptId: readString(object, "interrupt_id", ""),
    approved: readBoolean(object, "approved", false),
    rejectionMessage: readNullableString(object, "rejection_message"),
    resolvedAt: readString(object, "resolved_at", ""),
  };
  const answer = readNullableString(object, "answer");
  if (answer !== null) resolution.answer = answer;
  return resolution;
}
