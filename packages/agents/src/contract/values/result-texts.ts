/**
 * Texts the session writes where the model or a person reads them. Each is
 * written once, here. Quoted strings of the contract are matched exactly.
 */

/** Starts the `error` of a call whose tool Step never reached a Worker. */
export const toolCallNotRunErrorPrefix = "the tool did not run, so it is safe to call again";

/** The result the model sees for a write whose outcome is unknown. */
export const outcomeUnknownToolResult =
  "The tool call was interrupted and its outcome is unknown: it may or may not have taken effect. Check before calling it again.";

/** Starts the result the model sees for a write whose tool threw: its outcome is unknown, but nothing interrupted it. */
export const outcomeUnknownAfterToolErrorPrefix = "The tool call failed with an error, so its outcome is unknown: ";

/**
 * The result the model sees for a write whose tool threw `error` (not a
 * `ToolExecutionError`): the error's own message, and the warning that the
 * write may have taken effect before it failed. Unlike
 * {@link outcomeUnknownToolResult}, it claims no interruption.
 */
export function outcomeUnknownAfterToolErrorResult(error: string): string {
  return `${outcomeUnknownAfterToolErrorPrefix}${error}. It may or may not have taken effect before it failed. Check before calling it again.`;
}

/** Rejection text of an approval whose deadline passed. */
export const approvalDeadlinePassed = "approval deadline passed";

/** Rejection text of a question whose deadline passed. */
export const questionDeadlinePassed = "question deadline passed";

/** The result the model sees for a question the user declined without a message. */
export const questionDeclinedResult = "The user declined to answer.";

/** The result the model sees for a call of a planning turn that is not `write_todos`. */
export const planningTurnToolRejectedResult = "The tool call was not run: a planning turn can only call write_todos.";

/** The error of each `write_todos` call of a response that made more than one. */
export const writeTodosCalledMoreThanOnce = "write_todos was called more than once in one response";

/** The error of a built-in tool call with invalid arguments. */
export function invalidBuiltInToolArguments(toolName: string, reason: string): string {
  return `invalid ${toolName} arguments: ${reason}`;
}

/** The error of a `write_todos` call with invalid arguments. */
export function invalidTodos(reason: string): string {
  return `invalid todos: ${reason}`;
}

/** The error of a tool whose question would reuse another call's ID. */
export function toolQuestionIdClash(interruptId: string): string {
  return `the tool's question cannot use interrupt ID ${interruptId}, which another tool call of this turn uses`;
}

/** The user message of an `executing` turn, which an approved plan starts. */
export function planExecutionUserMessage(revision: number): string {
  return `[Perdure] The user approved plan revision ${revision}. Execute it and keep the task statuses current with write_todos.`;
}

/** The result the model sees for a rejected call. */
export function rejectedToolResult(rejectionMessage: string | null): string {
  return rejectionMessage === null || rejectionMessage === ""
    ? "The user rejected this tool call."
    : `The user rejected this tool call: ${rejectionMessage}`;
}

/** Starts the result the model sees for a failed call. */
export const failedToolResultPrefix = "The tool call failed: ";

/** The result the model sees for a failed call. */
export function failedToolResult(error: string): string {
  return `${failedToolResultPrefix}${error}`;
}

/** Opens the note a failed turn stores when its tool calls had results. */
export const turnFailureNoteHeader = "This turn failed before the assistant could answer. These tool calls ran during it:";

/** Closes the turn failure note. */
export const turnFailureNoteFooter = "Do not repeat these tool calls unless the user asks again.";

/** The result the model sees for a call that had not started when the user steered the turn. */
export const toolCallCancelledBySteeringResult = "The tool call was not run: the user sent a new message before it started.";

/** The result the model sees for a call that had not started when the user cancelled the turn. */
export const toolCallCancelledByTurnCancellationResult = "The tool call was not run: the user stopped the turn before it started.";

/** The result of a tool call stopped by steering or cancellation. */
export function toolCallCancelledResult(reason: "steered" | "turn_cancelled"): string {
  return reason === "steered" ? toolCallCancelledBySteeringResult : toolCallCancelledByTurnCancellationResult;
}

/** Opens the note a steered turn stores when its runner cannot store the turn's own messages. */
export const turnSteeredNoteHeader = "The user sent a new message before the assistant answered, so this turn ended early.";

/** Opens the note a cancelled turn stores when its runner cannot store the turn's own messages. */
export const turnCancelledNoteHeader = "The user stopped this turn before the assistant answered.";

/** Introduces the calls an ended turn's note lists. */
export const endedTurnNoteCallsIntro = "These tool calls ran during it:";

/** The error of a call whose tool started a task that the runner cannot poll. */
export const missingToolTaskPoller = "the tool started a task (ToolTaskStarted), but the runner has no pollToolTask method to follow it";

/** The result the model sees for a started task that `cancel_turn` abandoned. */
export const toolTaskAbandonedError = "the user stopped the turn while the tool's task ran; the task was asked to stop, and what it did is unknown";

/** Python's `str.isspace()` characters, which `str.strip()` removes; unlike JavaScript's `trim`, it keeps U+FEFF. */
const pythonWhitespace = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** True when Python's `text.strip()` would be empty. */
export function isBlankText(text: string): boolean {
  for (const character of text) if (!pythonWhitespace.has(character.codePointAt(0) ?? 0)) return false;
  return true;
}

/**
 * The result and error of a sub-agent call over the session's
 * `maxSubAgentsPerTurn`: recorded failed, it never starts a child.
 */
export function subAgentLimitResult(toolName: string, limit: number): string {
  return `sub-agent call refused: this turn has made ${limit} sub-agent calls, the limit maxSubAgentsPerTurn (${limit}), so ${toolName} did not run. Finish without more sub-agents in this turn, or raise maxSubAgentsPerTurn in the agent's options.`;
}
