/** Session settings over HTTP: read a request's settings, and replace a session's. */
import { InvalidInputError, type Client } from "@perdure/engine";
import type { SessionSettings } from "../contract/values/session-settings.ts";
import { describeAgentSessionFeatures, type AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { validateSessionSettings } from "../session/settings/session-settings-limits.ts";

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
  const text = typeof model === "string" ? JSON.stringify(model) : JSON.stringify(model) ?? String(model);
  const shown = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  throw new InvalidInputError(`model ${shown} is not one of agent ${flow.flowType}'s choices: ${modelChoices.join(", ")}`);
}

/** `update_session_settings`: true when the session took them; its next turn starts with them. */
export function updateSessionSettings(client: Client, flow: AgentSessionFlow, sessionId: string, settings: SessionSettings): Promise<boolean> {
  return client.invokeRPC(flow.updateSessionSettings, sessionId, { sessionSettings: settings });
}
