/**
 * How `perdure dev` reports a failed Step attempt in the terminal: a model
 * call (`RunModel`) or a tool call (`CallTool`, ...) that threw, with the
 * session, the Step, the attempt, the message and the stack, so a developer
 * sees what went wrong without opening the inspector.
 */
import type { FailedAttempt } from "@perdure/engine";

/**
 * The log entry for one failed attempt: a headline, then the stack indented.
 *
 * @example
 * formatFailedAttempt({ flowId: "s1", flowType: "SupportAgent", stepType: "RunModel", executionId: "4", method: "execute", attempt: 2, error });
 * // perdure dev: session s1 (SupportAgent): RunModel attempt 2 failed (execution 4): Error: the provider is down
 * //     at ...
 */
export function formatFailedAttempt(failure: FailedAttempt, command = "perdure dev"): string {
  const method = failure.method === "wait_until" ? " in waitUntil" : "";
  const headline = `${command}: session ${failure.flowId} (${failure.flowType}): ${failure.stepType} attempt ${failure.attempt} failed${method} (execution ${failure.executionId})`;
  const { error } = failure;
  if (!(error instanceof Error)) return `${headline}: ${String(error)}`;
  const summary = `${error.name}: ${error.message}`;
  // A stack starts with its own "Name: message" line; keep only the frames after it.
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return [`${headline}: ${summary}`, ...frames.map((frame) => `    ${frame.trim()}`)].join("\n");
}
