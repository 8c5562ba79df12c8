/**
 * The session fixture: a recorded session as a JSON file, as `perdure
 * export` writes it and `replaySession` reads it. Field names are the
 * file's own (snake_case, like the session's wire JSON).
 */
import { describeValue, InvalidInputError } from "@perdure/engine";

/** The `format` of every fixture file. */
export const sessionFixtureFormat = "perdure-session-fixture";
/** The fixture version this release writes and reads. */
export const sessionFixtureVersion = 1;

/** One model call of a recorded turn: what the agent sent and what the model answered. */
export interface SessionFixtureModelCall {
  request: unknown;
  response: unknown;
  /** `turn_completed` or `tool_calls_requested`. */
  outcome: string;
  /** True when the request was too large to keep its `input`; a replay then compares the rest. */
  input_omitted: boolean;
}

/** One tool call of a recorded turn, with its effect class and what it returned. */
export interface SessionFixtureToolCall {
  tool_call_id: string;
  tool_name: string;
  /** JSON text of the arguments. */
  arguments: string;
  effect: string;
  requires_approval: boolean;
  /** Its final status: `succeeded`, `failed`, `rejected` or `outcome_unknown`. */
  status: string;
  output: string | null;
  error: string | null;
  /** The answers to the questions the tool itself asked, oldest first; absent when it asked none. */
  input_answers?: { resolution: string; answer: string | null }[];
}

/** One ended turn. */
export interface SessionFixtureTurn {
  turn_id: string;
  /** The user messages that started the turn, in order. */
  user_messages: string[];
  /** The session settings the turn started with, or null. */
  session_settings: Record<string, unknown> | null;
  model_calls: SessionFixtureModelCall[];
  tool_calls: SessionFixtureToolCall[];
  /** Set when a fork inherited this turn: the session that ran it. */
  inherited_from: string | null;
  /** The turn's kind: a chat turn, a planning turn (`plan_mode`), or the execution of an approved plan. @default "chat" */
  interaction_mode?: "chat" | "planning" | "executing";
  /** What started it: a user message, steered messages (which ended the turn before), or the approval of plan `plan_revision`. @default "message" */
  started_by?: "message" | "steer" | "plan_execution";
  /** For a turn started by a plan approval: the approved revision. */
  plan_revision?: number;
}

/** A recorded session. */
export interface SessionFixture {
  format: typeof sessionFixtureFormat;
  version: typeof sessionFixtureVersion;
  flow_type: string;
  session_id: string;
  /** ISO 8601 time of the export. */
  exported_at: string;
  /** The fork's source, when the session is a fork. */
  lineage: { source_session_id: string; through_turn: number } | null;
  /** Ended turns, oldest first; a turn still running is left out. */
  turns: SessionFixtureTurn[];
}

/** Checks that `value` is a fixture this release reads; the error names what is wrong. */
export function checkSessionFixture(value: unknown): SessionFixture {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidInputError(`a session fixture must be a JSON object, got ${describeValue(value)}`);
  const fixture = value as Partial<SessionFixture>;
  if (fixture.format !== sessionFixtureFormat) throw new InvalidInputError(`format ${describeValue(fixture.format)} is not a session fixture's; perdure export writes "${sessionFixtureFormat}"`);
  if (fixture.version !== sessionFixtureVersion) throw new InvalidInputError(`session fixture version ${describeValue(fixture.version)} is not one this release reads (${sessionFixtureVersion})`);
  if (!Array.isArray(fixture.turns)) throw new InvalidInputError("the session fixture has no turns array");
  for (const [position, turn] of fixture.turns.entries()) {
    if (typeof turn?.turn_id !== "string" || !Array.isArray(turn.user_messages) || !Array.isArray(turn.model_calls) || !Array.isArray(turn.tool_calls)) {
      throw new InvalidInputError(`turn ${position} of the session fixture needs turn_id, user_messages, model_calls and tool_calls`);
    }
  }
  return fixture as SessionFixture;
}
