/** What every tool Step shares: its input, the tool call ID, and the retry of Steps that only record. */
import { TerminalError } from "@perdure/engine";

/** Record Steps retry until they commit, backing off to at most 5 seconds. */
export const recordRetry = { maximumAttempts: 1000, initialIntervalMs: 200, maximumIntervalMs: 5000 };

export function parseToolCallId(input: unknown): string {
  if (typeof input !== "string" || input === "") throw new TerminalError(`tool Step input ${JSON.stringify(input)} is not a tool call ID`);
  return input;
}
