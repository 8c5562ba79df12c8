/**
 * The texts a session program's user, model and tools produce, written once
 * here so the runner that produces them and the oracle that expects them
 * cannot drift apart.
 */
import type { AgentToolCallStatus } from "../../contract/values/agent-tool-call.ts";

/** The user message that starts turn `turnNumber`. */
export function programUserText(seed: number, turnNumber: number): string {
  return `seed ${seed}, request ${turnNumber}: please take care of it.`;
}

/** What the model says in a model call: which results it saw, so the transcript shows that every call reached it final. */
export function programModelText(turnId: string, modelCall: number, previousResults: readonly { toolCallId: string; status: AgentToolCallStatus }[]): string {
  const seen = previousResults.length === 0 ? "no tool results" : previousResults.map((call) => `${call.toolCallId}=${call.status}`).join(" ");
  return `${turnId} model call ${modelCall} saw ${seen}`;
}

/** The output of a tool call that succeeds. */
export function programToolOutput(toolName: string, toolCallId: string, n: number): string {
  return `${toolName} did ${n} for ${toolCallId}`;
}

/** The `ToolExecutionError` message of a tool call that refuses. */
export function programToolErrorMessage(toolName: string, n: number): string {
  return `${toolName} refused ${n}`;
}

/** The plain Error message of a tool attempt that crashes (every attempt of a `crash` call, or a transient failure). */
export function programToolCrashMessage(toolName: string): string {
  return `${toolName} crashed`;
}

/** The plain Error message of a failing model call. */
export function programModelErrorMessage(turnId: string, modelCall: number): string {
  return `model unavailable for ${turnId} call ${modelCall}`;
}

/** A rejection message the person may give. */
export function programRejectionMessage(toolCallId: string): string {
  return `not now (${toolCallId})`;
}
