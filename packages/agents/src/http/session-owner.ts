/**
 * Who owns a session: the principal that created it over HTTP, recorded as
 * `http_principal` in the session's start input, which the session itself
 * ignores. A session of another principal answers exactly like a session
 * that does not exist, so its ID leaks nothing.
 */
import { FlowNotFoundError, type FlowDescription } from "@perdure/engine";
import type { AgentHttpCaller, ResolvedAgentHttpHandlerOptions } from "./agent-http-options.ts";
import type { OwnedSession } from "./agent-http-route.ts";
import { HttpRefusal } from "./http-refusal.ts";

/** The start-input key that holds the creating principal. */
export const httpPrincipalInputKey = "http_principal";

/** The principal recorded in a session's start input, or null when none is. */
export function principalOfStartInput(input: unknown): string | null {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return null;
  const principal = (input as Record<string, unknown>)[httpPrincipalInputKey];
  return typeof principal === "string" ? principal : null;
}

/** Whether `caller` may use the session `description` describes, as far as its owner goes. */
export function isOwnedBy(options: ResolvedAgentHttpHandlerOptions, description: Pick<FlowDescription, "input">, caller: AgentHttpCaller): boolean {
  const principal = principalOfStartInput(description.input);
  return principal === null ? options.serveUnownedSessions : principal === caller.principal;
}

function notFound(sessionId: string): HttpRefusal {
  return new HttpRefusal(404, `session ${sessionId} not found`);
}

/** The session when it exists, is one of the served agents' and belongs to `caller`; the same 404 otherwise. */
export async function findOwnedSession(options: ResolvedAgentHttpHandlerOptions, caller: AgentHttpCaller, sessionId: string): Promise<OwnedSession> {
  let description: FlowDescription;
  try {
    description = await options.client.describe(sessionId);
  } catch (error) {
    if (FlowNotFoundError.isInstance(error)) throw notFound(sessionId);
    throw error;
  }
  const flow = options.flows.get(description.flowType);
  if (flow === undefined || !isOwnedBy(options, description, caller)) throw notFound(sessionId);
  return { sessionId, flow };
}
