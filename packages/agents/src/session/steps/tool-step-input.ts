/** What every tool Step shares: its input, the tool call ID, and the retry of Steps that only record. */
import { TerminalError, type MovementOptions } from "@perdure/engine";
import type { SessionEnvironment } from "../session-environment.ts";

/** Record Steps retry until they commit, backing off to at most 5 seconds. */
export const recordRetry = { maximumAttempts: 1000, initialIntervalMs: 200, maximumIntervalMs: 5000 };

export function parseToolCallId(input: unknown): string {
  if (typeof input !== "string" || input === "") throw new TerminalError(`tool Step input ${JSON.stringify(input)} is not a tool call ID`);
  return input;
}

/**
 * What a tool Step (`CallTool`, `CallSingleAttemptTool`) loads: its call's
 * record and the steered messages. It depends only on the call ID, so the
 * Step's movement carries it as well (see {@link toolStepMovementOptions}).
 */
export function toolCallLoads(environment: SessionEnvironment, toolCallId: string) {
  return [environment.persistence.agentToolCalls.instance(toolCallId), environment.persistence.steeredUserMessages];
}

/**
 * The movement options of a tool Step: its selection, so that a store which
 * reads a movement's loads in its claim (PostgreSQL) reads them there and the
 * Step starts without a read of its own. The Step type's `load` selects the
 * same, for a movement stored without them.
 */
export function toolStepMovementOptions(environment: SessionEnvironment, toolCallId: string): MovementOptions {
  return { load: toolCallLoads(environment, toolCallId) };
}
