/**
 * The turn's copy of the session settings: taken by the Step that starts a
 * turn, read by that turn's model calls, retries and compaction, so an
 * `update_session_settings` during a turn applies from the next turn on.
 */
import type { StepContext } from "@perdure/engine";
import type { SessionSettings } from "../../contract/values/session-settings.ts";
import type { AgentSessionPersistence } from "../persistence.ts";

/** Copies `SessionSettings` into `TurnSessionSettings`, tagged with the turn; deletes the copy when there are none. */
export function copyTurnSessionSettings(context: StepContext, persistence: AgentSessionPersistence, turnId: string): void {
  const settings = context.read(persistence.sessionSettings);
  context.write(persistence.turnSessionSettings, settings === undefined ? null : { turnId, settings });
}

/** The settings `turnId` started with; `{}` when there are none, or the copy is another turn's. */
export function turnSessionSettingsOf(context: StepContext, persistence: AgentSessionPersistence, turnId: string): SessionSettings {
  const copy = context.read(persistence.turnSessionSettings);
  return copy?.turnId === turnId ? copy.settings : {};
}
