/**
 * Session settings: one JSON object the application sets when it starts a
 * session and may replace later (`SessionSettings`), and the copy a turn
 * takes when it starts (`TurnSessionSettings`), so a running turn keeps the
 * settings it started with.
 */
import { asWireObject, readString, type WireObject } from "./wire.ts";

/**
 * The settings of a session, such as `{ model: "gpt-5" }`: a JSON object
 * that only model calls see. Never put a secret in it: snapshots return it.
 */
export type SessionSettings = Record<string, unknown>;

/** The `TurnSessionSettings` Attribute: the settings one turn started with. */
export interface TurnSessionSettings {
  /** The turn that copied them; a copy another turn left reads as no settings. */
  turnId: string;
  settings: SessionSettings;
}

/** The decoded settings object, or `{}` for anything that is not a JSON object. */
export function sessionSettingsFromWire(data: unknown): SessionSettings {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? { ...(data as SessionSettings) } : {};
}

export function turnSessionSettingsToWire(value: TurnSessionSettings): WireObject {
  return { turn_id: value.turnId, settings: value.settings };
}

export function turnSessionSettingsFromWire(data: unknown): TurnSessionSettings {
  const object = asWireObject(data, "TurnSessionSettings");
  return { turnId: readString(object, "turn_id", ""), settings: sessionSettingsFromWire(object.settings) };
}
