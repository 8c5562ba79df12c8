/**
 * The built-in tools a session handles itself, whatever the runner: their
 * names, and the description and JSON Schema a runner offers its model.
 */

/** The name of a built-in tool. */
export type BuiltInToolName = "ask_user" | "durable_wait" | "write_todos" | "schedule_turn";

/** Every built-in tool name, in the order runners offer them. */
export const builtInToolNames: readonly BuiltInToolName[] = ["ask_user", "durable_wait", "write_todos", "schedule_turn"];

/** A built-in tool as a model sees it. */
export interface BuiltInToolDefinition {
  readonly name: BuiltInToolName;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

const askUser: BuiltInToolDefinition = {
  name: "ask_user",
  description:
    "Ask the user a question and wait for the reply. Use it when only the user can supply a fact or make a decision you need. " +
    "Give choices when the answer is one of a few options; set allows_free_text to accept other text as well.",
  parameters: {
    type: "object",
    properties: {
      question: { type: "string", description: "The question, written for the user." },
      choices: { type: ["array", "null"], items: { type: "string" }, description: "Answers the user can pick from. Omit for a free-text question." },
      allows_free_text: {
        type: ["boolean", "null"],
        description: "Whether the user may answer with text outside the choices. Defaults to true without choices and false with them.",
      },
    },
    required: ["question"],
    additionalProperties: false,
  },
};

const durableWait: BuiltInToolDefinition = {
  name: "durable_wait",
  description:
    "Pause this conversation for a number of seconds, then continue where you left off. " +
    "The wait survives restarts and costs nothing while it lasts. Use it to wait for something that takes time, such as a delivery or a scheduled job.",
  parameters: {
    type: "object",
    properties: {
      duration_seconds: { type: "integer", minimum: 1, description: "How long to wait, in whole seconds." },
      reason: { type: "string", description: "Why you wait, shown to the user." },
    },
    required: ["duration_seconds", "reason"],
    additionalProperties: false,
  },
};

const writeTodos: BuiltInToolDefinition = {
  name: "write_todos",
  description:
    "Replace the plan with this list of tasks. Send the whole list every time, each task with its status: pending, in_progress, or completed. " +
    "Send an empty list to clear the plan.",
  parameters: {
    type: "object",
    properties: {
      todos: {
        type: "array",
        items: {
          type: "object",
          properties: {
            content: { type: "string", description: "What the task does." },
            status: { type: "string", enum: ["pending", "in_progress", "completed"] },
          },
          required: ["content", "status"],
          additionalProperties: false,
        },
      },
    },
    required: ["todos"],
    additionalProperties: false,
  },
};

/** A Perdure extension: the agent schedules its own follow-up turn (off unless the session enables it). */
const scheduleTurn: BuiltInToolDefinition = {
  name: "schedule_turn",
  description:
    "Schedule a later turn of this conversation: at that time the text arrives as a user message and you continue. " +
    "Give exactly one of after_seconds (once, that many seconds from now), at (once, an ISO 8601 time) or every (a cron expression, repeating). " +
    "Use it to follow up on something later, such as checking a delivery tomorrow.",
  parameters: {
    type: "object",
    properties: {
      text: { type: "string", description: "The message you receive when the turn runs; say what to do then." },
      after_seconds: { type: "integer", minimum: 1, description: "Run once, this many seconds from now." },
      at: { type: "string", description: "Run once at this ISO 8601 time, such as 2026-12-24T09:00:00Z." },
      every: { type: "string", description: "Run every time this cron expression matches: 5 fields (minute hour day month weekday), such as \"0 9 * * 1-5\"." },
      timezone: { type: "string", description: "The IANA time zone of every; UTC when absent." },
    },
    required: ["text"],
    additionalProperties: false,
  },
};

function deepFreeze<TValue>(value: TValue): TValue {
  if (typeof value === "object" && value !== null) {
    for (const nested of Object.values(value)) deepFreeze(nested);
    Object.freeze(value);
  }
  return value;
}

/**
 * The name, description, and JSON Schema of each built-in tool, by name. A
 * runner offers those in `turn.enabledBuiltInTools` to its model and returns
 * their calls like any other; the session handles them.
 *
 * @example
 * const { description, parameters } = builtInToolDefinitions.ask_user;
 */
export const builtInToolDefinitions: Readonly<Record<BuiltInToolName, BuiltInToolDefinition>> = deepFreeze({
  ask_user: askUser,
  durable_wait: durableWait,
  write_todos: writeTodos,
  schedule_turn: scheduleTurn,
});

/** The definition of one built-in tool. */
export function builtInToolDefinition(name: BuiltInToolName): BuiltInToolDefinition {
  return builtInToolDefinitions[name];
}

export function isBuiltInToolName(value: unknown): value is BuiltInToolName {
  return typeof value === "string" && (builtInToolNames as readonly string[]).includes(value);
}
