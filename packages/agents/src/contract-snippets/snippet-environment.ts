/**
 * What the contract's examples leave to the reader (`client`, `flow`,
 * `authorizeSession`), as live bindings the snippet test sets before it
 * calls a snippet.
 */
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { Client } from "@perdure/engine";

export let client: Client;
export let flow: AgentSessionFlow;
/** Every request the snippets authorized, by session. */
export const authorizedSessions: string[] = [];

export function setSnippetEnvironment(environment: { client: Client; flow: AgentSessionFlow }): void {
  client = environment.client;
  flow = environment.flow;
}

/** The application's check, as the examples call it. */
export async function authorizeSession(_request: Request, sessionId: string): Promise<void> {
  authorizedSessions.push(sessionId);
}
