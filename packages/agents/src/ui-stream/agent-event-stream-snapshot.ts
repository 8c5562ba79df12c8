/**
 * The plain-SSE snapshot: `get_agent_snapshot` and the engine Stream token
 * its events continue from.
 */
import { agentSnapshotToWire, type AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { WireObject } from "../contract/values/wire.ts";
import { findTurnOrigin, readNewestEventPosition } from "./agent-event-stream-positions.ts";
import { resolveAgentUIStreamSession, type AgentUIStreamSessionOptions } from "./agent-ui-stream-session.ts";

/** A snapshot and where its events continue. */
export interface AgentEventStreamSnapshot {
  snapshot: AgentSnapshot;
  /**
   * The engine Stream token to open the event stream from: while a turn is
   * active, the position before its first retained event, so the stream
   * replays it; otherwise the newest event. Empty to read from the oldest
   * retained event.
   */
  resumeToken: string;
}

/** Tool call record fields only the session's Steps use; the browser JSON leaves them out. */
const stepOnlyToolCallFields = ["tool_source_reference", "trace_context", "input_continuation", "input_answers", "task_answer_pending"] as const;

/**
 * Reads the snapshot for a browser that applies the event rules itself.
 *
 * @example
 * // GET /sessions/:id/snapshot
 * const value = await readAgentEventStreamSnapshot({ client, flow, flowId: sessionId });
 * return Response.json(convertAgentEventStreamSnapshotToJson(value));
 */
export async function readAgentEventStreamSnapshot(options: AgentUIStreamSessionOptions): Promise<AgentEventStreamSnapshot> {
  const session = resolveAgentUIStreamSession(options);
  // The newest position before the snapshot: a turn that starts in between is active in it and replays from its start.
  const newest = await readNewestEventPosition(session);
  const snapshot = await session.client.invokeRPC(session.flow.getAgentSnapshot, session.flowId);
  const activeTurnId = snapshot.state?.activeTurnId ?? null;
  if (activeTurnId === null) return { snapshot, resumeToken: newest ?? "" };
  const origin = await findTurnOrigin(session, activeTurnId);
  return { snapshot, resumeToken: origin.isFound ? (origin.origin ?? "") : (newest ?? "") };
}

/**
 * The snapshot as browser JSON: the `get_agent_snapshot` wire format without
 * the fields only the session's Steps use, plus `resume_token`. Messages leave
 * out `framework_item`, which can hold the agent's instructions; tool calls
 * leave out `tool_source_reference`, `trace_context`, `input_continuation`,
 * `input_answers` and `task_answer_pending`. `session_settings` is kept as
 * stored, so keep anything a browser must not see out of it.
 *
 * @example
 * const { resume_token } = convertAgentEventStreamSnapshotToJson(await readAgentEventStreamSnapshot({ client, flow, flowId }));
 */
export function convertAgentEventStreamSnapshotToJson(value: AgentEventStreamSnapshot): WireObject & { resume_token: string } {
  const wire = agentSnapshotToWire(value.snapshot);
  const messages = (wire.messages as WireObject[]).map(({ framework_item: _frameworkItem, ...message }) => message);
  const toolCalls = (wire.tool_calls as WireObject[]).map((call) => {
    const kept = { ...call };
    for (const field of stepOnlyToolCallFields) delete kept[field];
    return kept;
  });
  return { ...wire, messages, tool_calls: toolCalls, resume_token: value.resumeToken };
}
