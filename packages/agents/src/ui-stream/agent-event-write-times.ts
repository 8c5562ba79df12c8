/**
 * When each event of a plain Server-Sent Events stream was written, for a
 * UI of our own that shows it (`includeWriteTimes`). The events' `data`
 * stays the contract's `AgentEvent` wire JSON; the times travel in a frame
 * of another event type, which `EventSource.onmessage` never receives.
 */
import type { StreamMessage } from "@perdure/engine";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import { agentEventWriteTimesEventName } from "../contract/ui-stream/session-inspection.ts";

export { agentEventWriteTimesEventName } from "../contract/ui-stream/session-inspection.ts";

/**
 * One frame, sent before the events it describes: its `data` maps each
 * event's `id` (its resume token) to the ISO 8601 time the event was written
 * to the Stream. It has no `id` line, so `Last-Event-ID` stays the last event's.
 *
 * @example
 * // event: perdure-write-times
 * // data: {"<token of event 5>":"2026-12-02T19:32:04.125Z"}
 */
export function agentEventWriteTimesFrame(messages: readonly StreamMessage<AgentEvent>[]): string {
  const times = Object.fromEntries(messages.map((message) => [message.token, message.writtenAt.toISOString()]));
  return `event: ${agentEventWriteTimesEventName}\ndata: ${JSON.stringify(times)}\n\n`;
}
