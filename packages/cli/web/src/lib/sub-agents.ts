// The sub-agent tree around a session (sessions started by `agentTool`), as
// the inspector shows it: the parent session that called this one, and the
// child sessions this one started.
import type { SessionInspection } from "./api.ts";

export interface SubAgentTree {
  /** The session whose tool call started this one; null for a session no agent called. */
  parent: { sessionId: string; toolCallId: string; depth: number } | null;
  /** The sub-agent sessions this one started, ordered by session ID. */
  children: { sessionId: string; agent: string }[];
}

/** The sub-agent tree of an inspected session, or undefined when the session has neither parent nor children. */
export function subAgentTree(inspection: Pick<SessionInspection, "parentSession" | "childSessions">): SubAgentTree | undefined {
  const parent = inspection.parentSession ?? null;
  const children = [...(inspection.childSessions ?? [])].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  if (parent === null && children.length === 0) return undefined;
  return { parent, children };
}
