/**
 * The size limit and the checks of session settings: `validateSessionSettings`
 * for applications and tests, and the session's own, more tolerant check.
 */
import { describeValue } from "@perdure/engine";
import type { SessionSettings } from "../../contract/values/session-settings.ts";

/** Most UTF-8 bytes of the compact JSON text of session settings: 16 KiB. */
export const MAX_SESSION_SETTINGS_BYTES = 16 * 1024;

/**
 * How many bytes over {@link MAX_SESSION_SETTINGS_BYTES} the session itself
 * still accepts (1 KiB), because the cores write some floats and U+2028/U+2029
 * differently.
 */
export const SESSION_SETTINGS_SIZE_TOLERANCE_BYTES = 1024;

/**
 * Where the `failFlow` reason of a session started with invalid settings
 * begins; the rest names what was wrong.
 */
export const invalidStartSessionSettingsReason = "the session was started with invalid session settings";

/**
 * The UTF-8 size of the compact JSON text of `settings`, in bytes.
 *
 * @example
 * sessionSettingsSize({ model: "gpt-5" }); // 17
 */
export function sessionSettingsSize(settings: SessionSettings): number {
  return Buffer.byteLength(JSON.stringify(settings), "utf8");
}

/** The first thing in `value` that JSON cannot carry unchanged, with its path, or null. */
function firstNonJsonValue(value: unknown, path: string): string | null {
  if (value === null || typeof value === "string" || typeof value === "boolean") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : `${path} is ${String(value)}, which JSON cannot carry`;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = firstNonJsonValue(item, `${path}[${index}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value === "object") {
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype !== Object.prototype && prototype !== null) return `${path} is ${describeValue(value)}, not a plain JSON object`;
    for (const [key, item] of Object.entries(value)) {
      const found = firstNonJsonValue(item, `${path}.${key}`);
      if (found !== null) return found;
    }
    return null;
  }
  return `${path} is ${describeValue(value)}, which JSON cannot carry`;
}

/** Why `value` is not session settings at all (a JSON object), or null. */
export function sessionSettingsShapeProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `session settings must be a JSON object, got ${describeValue(value)}`;
  return firstNonJsonValue(value, "sessionSettings");
}

/**
 * Checks session settings before they are sent: a JSON object whose compact
 * JSON text is at most {@link MAX_SESSION_SETTINGS_BYTES} UTF-8 bytes.
 * Throws a `TypeError` that names the problem otherwise.
 *
 * @example
 * validateSessionSettings({ model: "gpt-5" });
 * await client.start(flow, sessionId, { initial_message: "Hello", session_settings: { model: "gpt-5" } });
 */
export function validateSessionSettings(settings: unknown): asserts settings is SessionSettings {
  const problem = sessionSettingsShapeProblem(settings);
  if (problem !== null) throw new TypeError(problem);
  const size = sessionSettingsSize(settings as SessionSettings);
  if (size > MAX_SESSION_SETTINGS_BYTES) {
    throw new TypeError(`session settings of ${size} bytes are over MAX_SESSION_SETTINGS_BYTES (${MAX_SESSION_SETTINGS_BYTES}); store a reference, such as a name, instead of the data`);
  }
}

/**
 * The session's own check, with {@link SESSION_SETTINGS_SIZE_TOLERANCE_BYTES}
 * more room: why `value` is refused, or null when it is accepted.
 */
export function sessionSettingsRefusal(value: unknown): string | null {
  const problem = sessionSettingsShapeProblem(value);
  if (problem !== null) return problem;
  const size = sessionSettingsSize(value as SessionSettings);
  const limit = MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES;
  return size > limit ? `session settings of ${size} bytes are over the session's limit of ${limit} bytes` : null;
}
