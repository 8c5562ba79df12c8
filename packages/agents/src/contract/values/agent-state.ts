import { describeValue } from "@perdure/engine";
import { asWireObject, readNullableString, readNumber, readString, withoutFields, type WireObject } from "./wire.ts";

/** What the session is doing. */
export type AgentStatus = "waiting_for_user_message" | "running_model" | "running_tools" | "compacting_context";

/** The kind of the active (or last) turn. */
export type InteractionMode = "chat" | "planning" | "executing";

/** The session's small, always-loaded state. */
export interface AgentState {
  status: AgentStatus;
  /** `turn-<n>` while a turn runs, else null. */
  activeTurnId: string | null;
  /** Turns started so far; the next turn is `turn-<turnCount + 1>`. */
  turnCount: number;
  /** Messages stored so far; the next message gets sequence `messageCount + 1`. */
  messageCount: number;
  /**
   * The kind of the active (or last) turn. Omitted while it is `chat`, so a
   * session that uses no plans decodes to its 0.1.0 shape; the wire always
   * carries `interaction_mode`.
   * @default "chat"
   */
  interactionMode?: InteractionMode;
  /** The error of the latest failed turn, until a turn completes. */
  lastTurnError: string | null;
  /**
   * Whether the active turn can be steered or cancelled: true for a turn
   * this release started. A turn an earlier Worker started or advanced has
   * it absent (false), and `steer_user_message` and `cancel_turn` return
   * false for it. Omitted while false; the wire always carries
   * `accepts_turn_control`.
   * @default false
   */
  acceptsTurnControl?: boolean;
  createdAt: string;
  updatedAt: string;
}

const statuses: readonly AgentStatus[] = ["waiting_for_user_message", "running_model", "running_tools", "compacting_context"];
const modes: readonly InteractionMode[] = ["chat", "planning", "executing"];

export function agentStateToWire(state: AgentState): WireObject {
  return {
    status: state.status,
    active_turn_id: state.activeTurnId,
    turn_count: state.turnCount,
    message_count: state.messageCount,
    interaction_mode: state.interactionMode ?? "chat",
    last_turn_error: state.lastTurnError,
    accepts_turn_control: state.acceptsTurnControl ?? false,
    created_at: state.createdAt,
    updated_at: state.updatedAt,
  };
}

export function agentStateFromWire(data: unknown): AgentState {
  const object = asWireObject(data, "AgentState");
  const status = readString(object, "status", "waiting_for_user_message");
  const mode = readString(object, "interaction_mode", "chat");
  const state: AgentState = {
    status: (statuses as readonly string[]).includes(status) ? (status as AgentStatus) : "waiting_for_user_message",
    activeTurnId: readNullableString(object, "active_turn_id"),
    turnCount: readNumber(object, "turn_count", 0),
    messageCount: readNumber(object, "message_count", 0),
    lastTurnError: readNullableString(object, "last_turn_error"),
    createdAt: readString(object, "created_at", ""),
    updatedAt: readString(object, "updated_at", ""),
  };
  if (object.accepts_turn_control === true) state.acceptsTurnControl = true;
  return withInteractionMode(state, (modes as readonly string[]).includes(mode) ? (mode as InteractionMode) : "chat");
}

/** The state with this interaction mode, omitting the field for `chat`, its default. */
export function withInteractionMode(state: AgentState, mode: InteractionMode): AgentState {
  const rest = withoutFields(state, ["interactionMode"]);
  return mode === "chat" ? rest : { ...rest, interactionMode: mode };
}

/** The Flow input of `StartAgentSession`. */
export interface AgentSessionStartInput {
  /** When set, the session starts its first turn with this message. */
  initialMessage?: string | null;
  /**
   * Stored in `SessionSettings`; every turn copies them when it starts. At
   * most `MAX_SESSION_SETTINGS_BYTES` of compact JSON; the session fails at
   * once, with a reason that starts with `invalidStartSessionSettingsReason`,
   * beyond its tolerance. Wire field `session_settings`.
   * @default none
   */
  sessionSettings?: Record<string, unknown> | null;
}

export function agentSessionStartInputFromWire(data: unknown): AgentSessionStartInput {
  if (data === null || data === undefined) return {};
  const object = asWireObject(data, "AgentSessionStartInput");
  const initialMessage = readNullableString(object, "initial_message") ?? readNullableString(object, "initialMessage");
  // Kept as given: StartAgentSession checks it and fails the session when it is not valid settings.
  const sessionSettings = (Object.hasOwn(object, "session_settings") ? object.session_settings : object.sessionSettings) as AgentSessionStartInput["sessionSettings"];
  return {
    ...(initialMessage === null ? {} : { initialMessage }),
    ...(sessionSettings === undefined || sessionSettings === null ? {} : { sessionSettings }),
  };
}

/**
 * Checks a session's start input as `client.start` receives it: an object
 * whose `initial_message` (or `initialMessage`), when present, is a string.
 */
export function checkAgentSessionStartInput(data: unknown): Record<string, unknown> {
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) throw new TypeError(`the session input must be an object, got ${describeValue(data)}`);
  const object = data as Record<string, unknown>;
  const message = object.initial_message ?? object.initialMessage;
  if (message !== undefined && message !== null && typeof message !== "string") {
    throw new TypeError(`initial_message must be a string or null, got ${describeValue(message)}`);
  }
  return object;
}
