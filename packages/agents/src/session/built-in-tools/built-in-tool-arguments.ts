/**
 * Checks the arguments of built-in tool calls in `RunModel`'s commit. A
 * `null` optional argument counts as absent, and "blank" is what Python's
 * `str.strip()` would leave empty, as in the Python core.
 */
import { agentPlanTaskStatuses, type AgentPlanTask } from "../../contract/values/agent-plan.ts";
import { isBlankText } from "../../contract/values/result-texts.ts";
import { pythonJsonLoads, pythonRepr } from "../../contract/python-json.ts";

/** The arguments, or the reason they are invalid (without the `invalid <tool> arguments: ` prefix). */
export type CheckedArguments<TValue> = { ok: true; value: TValue } | { ok: false; reason: string };

/** `ask_user` arguments after the check. */
export interface AskUserArguments {
  question: string;
  choices: string[] | null;
  allowsFreeText: boolean;
}

/** `durable_wait` arguments after the check. */
export interface DurableWaitArguments {
  durationSeconds: number;
  reason: string;
}

function parseObject(argumentsText: string): CheckedArguments<Record<string, unknown>> {
  let value: unknown = null;
  if (!isBlankText(argumentsText)) {
    const parsed = pythonJsonLoads(argumentsText);
    if (!parsed.ok) return { ok: false, reason: `the arguments are not JSON: ${parsed.message}` };
    value = parsed.value;
  }
  value ??= {};
  if (typeof value !== "object" || Array.isArray(value)) return { ok: false, reason: `expected a JSON object, got ${pythonRepr(value)}` };
  return { ok: true, value: value as Record<string, unknown> };
}

function unexpectedKeys(object: Record<string, unknown>, allowed: readonly string[]): string | null {
  const extra = Object.keys(object).filter((key) => !allowed.includes(key)).sort();
  if (extra.length === 0) return null;
  return `unexpected argument${extra.length === 1 ? "" : "s"} ${extra.map((key) => pythonRepr(key)).join(", ")}`;
}

function nonBlankString(value: unknown): value is string {
  return typeof value === "string" && !isBlankText(value);
}

/** Checks `{ question, choices?, allows_free_text? }`. */
export function checkAskUserArguments(argumentsText: string): CheckedArguments<AskUserArguments> {
  const parsed = parseObject(argumentsText);
  if (!parsed.ok) return parsed;
  const object = parsed.value;
  const extra = unexpectedKeys(object, ["question", "choices", "allows_free_text"]);
  if (extra !== null) return { ok: false, reason: extra };
  const { question } = object;
  const choices = object.choices ?? null;
  const allowsFreeText = object.allows_free_text ?? null;
  if (!nonBlankString(question)) return { ok: false, reason: `question must be a non-blank string, got ${pythonRepr(question ?? null)}` };
  if (choices !== null) {
    if (!Array.isArray(choices) || choices.length === 0) return { ok: false, reason: `choices must be a non-empty list of strings, got ${pythonRepr(choices)}` };
    const bad: unknown = (choices as unknown[]).find((choice) => !nonBlankString(choice));
    if (bad !== undefined) return { ok: false, reason: `every choice must be a non-blank string, got ${pythonRepr(bad)}` };
    if (new Set(choices).size !== choices.length) return { ok: false, reason: "choices must not repeat" };
  }
  if (allowsFreeText !== null && typeof allowsFreeText !== "boolean") return { ok: false, reason: `allows_free_text must be a boolean, got ${pythonRepr(allowsFreeText)}` };
  const resolvedFreeText = allowsFreeText ?? choices === null;
  if (choices === null && !resolvedFreeText) return { ok: false, reason: "allows_free_text is false, so choices must be given" };
  return { ok: true, value: { question, choices: choices as string[] | null, allowsFreeText: resolvedFreeText } };
}

/** Checks `{ duration_seconds, reason }`, with `duration_seconds` a whole number from 1 to `maxSeconds`. */
export function checkDurableWaitArguments(argumentsText: string, maxSeconds: number): CheckedArguments<DurableWaitArguments> {
  const parsed = parseObject(argumentsText);
  if (!parsed.ok) return parsed;
  const object = parsed.value;
  const extra = unexpectedKeys(object, ["duration_seconds", "reason"]);
  if (extra !== null) return { ok: false, reason: extra };
  const duration = object.duration_seconds ?? null;
  const reason = object.reason ?? null;
  if (typeof duration !== "number" || !Number.isInteger(duration) || duration < 1 || duration > maxSeconds) {
    return { ok: false, reason: `duration_seconds must be a whole number from 1 to ${maxSeconds}, got ${pythonRepr(duration)}` };
  }
  if (!nonBlankString(reason)) return { ok: false, reason: `reason must be a non-blank string, got ${pythonRepr(reason)}` };
  return { ok: true, value: { durationSeconds: duration, reason } };
}

/** `schedule_turn`'s arguments: the text and exactly one of after_seconds, at and every. */
export interface ScheduleTurnArguments {
  text: string;
  afterSeconds: number | null;
  at: string | null;
  every: string | null;
  timezone: string | null;
}

/** Checks `schedule_turn`'s arguments' shape; times and cron expressions are checked when the schedule is stored. */
export function checkScheduleTurnArguments(argumentsText: string): CheckedArguments<ScheduleTurnArguments> {
  const parsed = parseObject(argumentsText);
  if (!parsed.ok) return parsed;
  const object = parsed.value;
  const extra = unexpectedKeys(object, ["text", "after_seconds", "at", "every", "timezone"]);
  if (extra !== null) return { ok: false, reason: extra };
  const text = object.text ?? null;
  const afterSeconds = object.after_seconds ?? null;
  const at = object.at ?? null;
  const every = object.every ?? null;
  const timezone = object.timezone ?? null;
  if (!nonBlankString(text)) return { ok: false, reason: `text must be a non-blank string, got ${pythonRepr(text)}` };
  const given = [afterSeconds, at, every].filter((value) => value !== null).length;
  if (given !== 1) return { ok: false, reason: `give exactly one of after_seconds, at and every, got ${given}` };
  if (afterSeconds !== null && (typeof afterSeconds !== "number" || !Number.isInteger(afterSeconds) || afterSeconds < 1)) {
    return { ok: false, reason: `after_seconds must be a whole number of at least 1, got ${pythonRepr(afterSeconds)}` };
  }
  if (at !== null && typeof at !== "string") return { ok: false, reason: `at must be an ISO 8601 time, got ${pythonRepr(at)}` };
  if (every !== null && typeof every !== "string") return { ok: false, reason: `every must be a cron expression, got ${pythonRepr(every)}` };
  if (timezone !== null && typeof timezone !== "string") return { ok: false, reason: `timezone must be a time zone name, got ${pythonRepr(timezone)}` };
  return { ok: true, value: { text, afterSeconds: afterSeconds as number | null, at: at as string | null, every: every as string | null, timezone: timezone as string | null } };
}

/** Checks `{ todos: [{ content, status }] }`; the reason goes after `invalid todos: `. */
export function checkWriteTodosArguments(argumentsText: string): CheckedArguments<AgentPlanTask[]> {
  const parsed = parseObject(argumentsText);
  if (!parsed.ok) return parsed;
  const object = parsed.value;
  const extra = unexpectedKeys(object, ["todos"]);
  if (extra !== null) return { ok: false, reason: extra };
  const todos = object.todos ?? null;
  if (!Array.isArray(todos)) return { ok: false, reason: `todos must be a list, got ${pythonRepr(todos)}` };
  const tasks: AgentPlanTask[] = [];
  for (const [index, todo] of todos.entries()) {
    if (typeof todo !== "object" || todo === null || Array.isArray(todo)) return { ok: false, reason: `todos[${index}] must be an object, got ${pythonRepr(todo)}` };
    const entry = todo as Record<string, unknown>;
    const extraTodo = unexpectedKeys(entry, ["content", "status"]);
    if (extraTodo !== null) return { ok: false, reason: `todos[${index}]: ${extraTodo}` };
    if (!nonBlankString(entry.content)) return { ok: false, reason: `todos[${index}].content must be a non-blank string, got ${pythonRepr(entry.content ?? null)}` };
    if (typeof entry.status !== "string" || !(agentPlanTaskStatuses as readonly string[]).includes(entry.status)) {
      return { ok: false, reason: `todos[${index}].status must be one of 'pending', 'in_progress', 'completed', got ${pythonRepr(entry.status ?? null)}` };
    }
    tasks.push({ content: entry.content, status: entry.status as AgentPlanTask["status"] });
  }
  return { ok: true, value: tasks };
}
