import { asWireObject, readNumber, readString, type WireObject } from "./wire.ts";

/** Every event type on the `AgentEvents` Stream. */
export type AgentEventType =
  | "turn_started"
  | "turn_completed"
  | "turn_failed"
  | "turn_steered"
  | "turn_cancelled"
  | "text_delta"
  | "reasoning_delta"
  | "tool_call_deferred"
  | "tool_call_started"
  | "tool_call_finished"
  | "interrupt_raised"
  | "interrupt_resolved"
  | "timer_started"
  | "plan_updated"
  | "plan_execution_started"
  | "tool_task_started"
  | "usage_recorded"
  | "compaction_started"
  | "compaction_finished"
  | "mcp.tool_progress"
  | "mcp.task_status"
  | "harness.tool_call_started"
  | "harness.tool_call_finished";

/**
 * A live event. `payload` keeps its wire (snake_case) field names, as the
 * contract lists them, in TypeScript too.
 */
export interface AgentEvent {
  type: AgentEventType;
  turnId: string | null;
  /** The Step attempt that wrote it. */
  attempt: number;
  /** The Step execution that wrote it. */
  stepExecutionId: string;
  payload: Record<string, unknown>;
}

export function agentEventToWire(event: AgentEvent): WireObject {
  return { type: event.type, turn_id: event.turnId, attempt: event.attempt, step_execution_id: event.stepExecutionId, payload: event.payload };
}

export function agentEventFromWire(data: unknown): AgentEvent {
  const object = asWireObject(data, "AgentEvent");
  const payload = object.payload;
  return {
    type: readString(object, "type", "turn_started") as AgentEventType,
    turnId: typeof object.turn_id === "string" ? object.turn_id : null,
    attempt: readNumber(object, "attempt", 1),
    stepExecutionId: readString(object, "step_execution_id", ""),
    payload: typeof payload === "object" && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {},
  };
}

/** Writes events bound to one turn, Step execution and attempt. */
export interface AgentEventWriter {
  /** Writes an event now (best effort: never rolled back, may repeat on retry). */
  write(type: AgentEventType, payload: Record<string, unknown>): Promise<void>;
  textDelta(text: string): Promise<void>;
  reasoningDelta(text: string): Promise<void>;
}
