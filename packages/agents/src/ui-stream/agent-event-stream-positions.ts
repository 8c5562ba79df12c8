/**
 * Engine Stream positions of the `AgentEvents` Stream: the newest event, and
 * the position just before a turn's first retained event.
 */
import { InvalidResumeTokenError } from "@perdure/engine";
import type { AgentUIStreamSession } from "./agent-ui-stream-session.ts";

/** Where a turn's events start. */
export interface AgentTurnOrigin {
  /** The engine token before the turn's first retained event; null to read from the oldest retained event. */
  origin: string | null;
  /** Whether any event of the turn is retained. */
  isFound: boolean;
}

const pageSize = 1000;

/** The token of the newest retained event, or null when the session has none. */
export async function readNewestEventPosition(session: AgentUIStreamSession): Promise<string | null> {
  const [newest] = await session.client.listStreamMessages(session.flowId, session.flow.agentEvents, { limit: 1 });
  return newest?.token ?? null;
}

/** True when the engine accepts `after` as a position of this session's events. */
export async function isEventPositionAccepted(session: AgentUIStreamSession, after: string | null): Promise<boolean> {
  if (after === null) return true;
  try {
    await session.client.readStream(session.flowId, session.flow.agentEvents, { after, limit: 1 });
    return true;
  } catch (error) {
    if (InvalidResumeTokenError.isInstance(error)) return false;
    throw error;
  }
}

/**
 * Finds the position before a turn's first retained event. Looks through the
 * newest events first, since the turn is usually the latest; scans from the
 * oldest retained event only when the turn is longer than that.
 */
export async function findTurnOrigin(session: AgentUIStreamSession, turnId: string): Promise<AgentTurnOrigin> {
  const { client, flow, flowId } = session;
  const recent = await client.listStreamMessages(flowId, flow.agentEvents, { limit: pageSize });
  const index = recent.findIndex((message) => message.value.turnId === turnId);
  if (index === -1) return { origin: recent.at(-1)?.token ?? null, isFound: false };
  if (index > 0) return { origin: recent[index - 1]?.token ?? null, isFound: true };
  if (recent.length < pageSize) return { origin: null, isFound: true };
  let after: string | undefined;
  let previous: string | null = null;
  for (;;) {
    const read = await client.readStream(flowId, flow.agentEvents, { limit: pageSize, ...(after === undefined ? {} : { after }) });
    for (const message of read.messages) {
      if (message.value.turnId === turnId) return { origin: previous, isFound: true };
      previous = message.token;
    }
    if (read.messages.length < pageSize) return { origin: previous, isFound: false };
    after = read.nextToken;
  }
}
