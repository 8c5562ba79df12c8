/** Session settings from the dev server: read a request's settings, and replace a session's. */
import { validateSessionSettings, type AgentSessionFlow, type SessionSettings } from "@perdure/agents";
import { InvalidInputError, type Client } from "@perdure/engine";

/**
 * The `sessionSettings` of a request body, checked with
 * `validateSessionSettings`; undefined when the body has none.
 */
export function readSessionSettings(body: Record<string, unknown>): SessionSettings | undefined {
  const settings = body.sessionSettings;
  if (settings === undefined) return undefined;
  try {
    validateSessionSettings(settings);
  } catch (error) {
    throw new InvalidInputError(error instanceof Error ? error.message : String(error));
  }
  return settings;
}

/** `update_session_settings`: true when the session took them; its next turn starts with them. */
export function updateSessionSettings(client: Client, flow: AgentSessionFlow, sessionId: string, settings: SessionSettings): Promise<boolean> {
  return client.invokeRPC(flow.updateSessionSettings, sessionId, { sessionSettings: settings });
}
