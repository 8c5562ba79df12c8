// What the inspector's Events tab says about each event: its family and a
// one-line summary.
import { oneLine } from "./format.ts";
import type { ReceivedEvent } from "./hooks.ts";

/**
 * An interrupt's end. A question's answer is "answered" (the session also
 * records it as approved, which is not what a person did), a decline
 * "declined"; an approval "approved" or "rejected"; either "withdrawn" when
 * a stop or a steered message ended it.
 */
function describeResolution(payload: Record<string, unknown>): string {
  const message = typeof payload.rejection_message === "string" && payload.rejection_message !== "" ? `: ${payload.rejection_message}` : "";
  const kind = typeof payload.kind === "string" ? payload.kind : "approval";
  if (payload.cancellation_reason === "turn_cancelled") return `${kind} withdrawn: the turn was stopped`;
  if (payload.cancellation_reason === "steered") return `${kind} withdrawn: a message steered the turn`;
  if (kind === "question") return payload.answered === true ? "question answered" : `question declined${message}`;
  return payload.approved === true ? "approved" : `rejected${message}`;
}

/** The family an event type belongs to, for its colour and filters. */
export function eventFamilyOf(type: string): string {
  if (type === "turn_failed") return "error";
  if (type.startsWith("turn_")) return "turn";
  if (type.endsWith("_delta")) return "text";
  if (type.startsWith("tool_") || type === "timer_started" || type.startsWith("mcp.")) return "tool";
  if (type.startsWith("interrupt_")) return "interrupt";
  if (type === "usage_recorded") return "usage";
  return "other";
}

/** A payload value as text: strings as they are, anything else as JSON, nothing as "". */
export function eventText(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
}

/** One line that says what an event means. */
export function summarizeEvent(event: Pick<ReceivedEvent, "type" | "payload">): string {
  const payload = event.payload;
  switch (event.type) {
    case "turn_started":
      return `user message #${eventText(payload.sequence)}`;
    case "turn_completed":
      return `${eventText(payload.message_count)} messages added`;
    case "turn_failed":
      return eventText(payload.error);
    case "tool_call_deferred":
      return `${eventText(payload.tool_name)} · ${eventText(payload.effect)}${payload.requires_approval === true ? " · needs approval" : ""}`;
    case "tool_call_started":
      return eventText(payload.tool_name);
    case "tool_call_finished":
      return `${eventText(payload.tool_name)} → ${eventText(payload.status)}`;
    case "interrupt_raised":
      return `${eventText(payload.kind)} for ${eventText(payload.tool_name)}`;
    case "interrupt_resolved":
      return describeResolution(payload);
    case "usage_recorded": {
      const recorded = payload.recorded as { total_tokens?: number } | undefined;
      const session = payload.session as { total_tokens?: number } | undefined;
      return `+${recorded?.total_tokens ?? 0} tokens (session ${session?.total_tokens ?? 0})`;
    }
    case "mcp.tool_progress": {
      const total = typeof payload.total === "number" ? ` of ${payload.total}` : "";
      return `${eventText(payload.tool_name)} · ${eventText(payload.progress)}${total}${payload.message ? ` · ${eventText(payload.message)}` : ""}`;
    }
    case "mcp.task_status":
      return `${eventText(payload.tool_name)} · task ${eventText(payload.task_id)} ${eventText(payload.status)}${payload.status_message ? `: ${eventText(payload.status_message)}` : ""}`;
    default:
      return oneLine(payload, 100);
  }
}

