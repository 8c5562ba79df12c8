import type { AgentEvent } from "../contract/values/agent-event.ts";
import type { AgentEventJson } from "./agent-ui-message-types.ts";

/**
 * An event as browser JSON: the `AgentEvent` wire fields with `payload` as
 * JSON text, as `data-agent-event` parts and plain Server-Sent Events carry
 * it, and nothing else.
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
