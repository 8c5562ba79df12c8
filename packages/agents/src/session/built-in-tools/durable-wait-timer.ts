/** The Timer ID of a `durable_wait` call, which `client.skipTimer` names. */

const timerIdCharacters = /[^A-Za-z0-9_.:-]/g;

/**
 * `durable_wait:<toolCallId>`, with characters a Timer ID cannot hold
 * replaced by `_` and cut to 128 characters.
 *
 * @example
 * await client.skipTimer(sessionId, durableWaitTimerId("call-1"));
 */
export function durableWaitTimerId(toolCallId: string): string {
  return `durable_wait:${toolCallId}`.replace(timerIdCharacters, "_").slice(0, 128);
}
