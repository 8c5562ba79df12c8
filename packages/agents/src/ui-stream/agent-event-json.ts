import type { StreamMessage } from "@perdure/engine";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import type { AgentEventJson } from "./agent-ui-message-types.ts";

/**
 * An event as browser JSON: the `AgentEvent` wire fields with `payload` as
 * JSON text, as `data-agent-event` parts carry it.
 *
 * @example
 * const json = convertAgentEventToJson(message.value);
 * // { type: "usage_recorded", turn_id: "turn-1", attempt: 1, step_execution_id: "…", payload: "{\"recorded\":…}" }
 */
export function convertAgentEventToJson(event: AgentEvent): AgentEventJson {
  return {
    type: event.type,
    turn_id: event.turnId,
    attempt: event.attempt,
    step_execution_id: event.stepExecutionId,
    payload: JSON.stringify(event.payload),
  };
}

/**
 * An event read from the `AgentEvents` Stream as browser JSON, as plain
 * Server-Sent Events carry it: {@link convertAgentEventToJson} plus
 * `written_at`, when the Stream message was written (ISO 8601), so a UI that
 * replays older events shows when each happened rather than when it arrived.
 *
 * @example
 * const json = convertAgentEventMessageToJson(message);
 * // { type: "turn_started", turn_id: "turn-1", …, written_at: "2026-12-02T19:32:04.125Z" }
 */
export function convertAgentEventMessageToJson(message: StreamMessage<AgentEvent>): AgentEventJson & { written_at: string } {
  return { ...convertAgentEventToJson(message.value), written_at: message.writtenAt.toISOString() };
}
