/** `update_session_settings`: replaces the session's settings; the next turn starts with them. */
import { rpc } from "@perdure/engine";
import type { SessionSettings } from "../../contract/values/session-settings.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { sessionSettingsRefusal, sessionSettingsShapeProblem } from "../settings/session-settings-limits.ts";
import { requireRunningSession } from "./require-running-session.ts";
import { inputField, inputObject } from "./rpc-input.ts";

/** Input of `update_session_settings`. */
export interface UpdateSessionSettingsInput {
  /** The new settings, replacing the old ones whole; `{}` clears them. `null` is refused (the RPC returns false). */
  sessionSettings: SessionSettings | null;
}

function parseUpdateSessionSettings(raw: unknown): UpdateSessionSettingsInput {
  const object = inputObject(raw, "update_session_settings");
  const settings = inputField(object, "sessionSettings", "session_settings");
  if (settings === null) return { sessionSettings: null };
  const problem = settings === undefined ? "update_session_settings needs sessionSettings: an object, or {} to clear them" : sessionSettingsShapeProblem(settings);
  if (problem !== null) throw new TypeError(problem);
  return { sessionSettings: settings as SessionSettings };
}

/**
 * Replaces `SessionSettings`; nothing is merged, and `{}` clears them. A
 * running turn keeps the settings it started with. `false` before the
 * session initialized, for `null`, and beyond `MAX_SESSION_SETTINGS_BYTES`
 * plus `SESSION_SETTINGS_SIZE_TOLERANCE_BYTES`.
 */
export function createUpdateSessionSettingsRpc(environment: SessionEnvironment) {
  const { persistence } = environment;
  return rpc<UpdateSessionSettingsInput, boolean>({
    name: "update_session_settings",
    parseInput: parseUpdateSessionSettings,
    handler: async (context, input) => {
      requireRunningSession(context, "update_session_settings");
      if ((await context.read(persistence.agentState)) === undefined) return false;
      if (input.sessionSettings === null || sessionSettingsRefusal(input.sessionSettings) !== null) return false;
      // {} clears: no settings and empty settings read the same, so store nothing.
      await context.write(persistence.sessionSettings, Object.keys(input.sessionSettings).length === 0 ? null : input.sessionSettings);
      return true;
    },
  });
}
