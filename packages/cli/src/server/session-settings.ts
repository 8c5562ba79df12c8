/** Session settings from the dev server: read a request's settings, and replace a session's. */
import { describeAgentSessionFeatures, validateSessionSettings, type AgentSessionFlow, type SessionSettings } from "@perdure/agents";
import { InvalidInputError, type Client } from "@perdure/engine";
import { truncateText } from "../format/truncate-text.ts";

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

/**
 * Refuses a `model` setting that is not one of the agent's `modelChoices`,
 * naming the value and the choices. Agents without choices take any settings.
 */
export function checkModelChoice(flow: AgentSessionFlow, settings: SessionSettings): void {
  const { modelChoices } = describeAgentSessionFeatures(flow);
  if (modelChoices.length === 0 || !Object.hasOwn(settings, "model")) return;
  const model = settings.model;
  if (typeof model === "string" && modelChoices.includes(model)) return;
  const shown = typeof model === "string" ? JSON.stringify(truncateText(model, 80)) : truncateText(JSON.stringify(model) ?? String(model), 80);
  throw new InvalidInputError(`model ${shown} is not one of agent ${flow.flowType}'s choices: ${modelChoices.join(", ")}`);
}

/** `update_session_settings`: true when the session took them; its next turn starts with them. */
export function updateSessionSettings(client: Client, flow: AgentSessionFlow, sessionId: string, settings: SessionSettings): Promise<boolean> {
  return client.invokeRPC(flow.updateSessionSettings, sessionId, { sessionSettings: settings });
}
