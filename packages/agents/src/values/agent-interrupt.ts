import { asWireObject, compact, readBoolean, readNullableString, readString, type WireObject } from "./wire.ts";

/** A human decision the session waits for. Questions arrive with the built-in tools. */
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
}

/** How `resolve_interrupt` answered an interrupt. */
export interface AgentInterruptResolution {
  interruptId: string;
  approved: boolean;
  rejectionMessage: string | null;
  resolvedAt: string;
}

/** The interrupt ID of a tool call's approval. */
export function approvalInterruptId(toolCallId: string): string {
  return `${toolCallId}-approval`;
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
  });
}

export function agentInterruptFromWire(data: unknown): AgentInterrupt {
  const object = asWireObject(data, "AgentInterrupt");
  return {
    interruptId: readString(object, "interrupt_id", ""),
    kind: readString(object, "kind", "approval") === "question" ? "question" : "approval",
    toolCallId: readString(object, "tool_call_id", ""),
    toolName: readString(object, "tool_name", ""),
    arguments: readString(object, "arguments", "{}"),
    turnId: readString(object, "turn_id", ""),
    deadline: readNullableString(object, "deadline"),
    createdAt: readString(object, "created_at", ""),
  };
}

export function agentInterruptResolutionToWire(resolution: AgentInterruptResolution): WireObject {
  return {
    interrupt_id: resolution.interruptId,
    approved: resolution.approved,
    rejection_message: resolution.rejectionMessage,
    resolved_at: resolution.resolvedAt,
  };
}

export function agentInterruptResolutionFromWire(data: unknown): AgentInterruptResolution {
  const object = asWireObject(data, "AgentInterruptResolution");
  return {
    interruptId: readString(object, "interrupt_id", ""),
    approved: readBoolean(object, "approved", false),
    rejectionMessage: readNullableString(object, "rejection_message"),
    resolvedAt: readString(object, "resolved_at", ""),
  };
}
