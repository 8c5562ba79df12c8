import { AgentSessionRecordReader } from "./agent-session-record-reader.ts";
import type { AgentUIStreamContext, AgentUIStreamItem } from "./agent-ui-stream-cursor.ts";
import type { AgentUIStreamSession } from "./agent-ui-stream-session.ts";
import { initialAgentUIStreamState } from "./agent-ui-stream-state.ts";
import { AgentUIStreamTokenCodec, type AgentUIStreamPosition } from "./agent-ui-stream-token.ts";
import type { AgentUIStreamSource } from "./server-sent-event-responses.ts";

/** One stream's context, with the abort that stops its reads. */
export interface AgentUIStreamRun {
  context: AgentUIStreamContext;
  abort: () => void;
}

/** Opens the context of one stream; it stops when `signal` aborts or the consumer cancels. */
export async function openAgentUIStreamRun(
  session: AgentUIStreamSession,
  options: { isFinishingWhenAwaitingApproval: boolean; signal: AbortSignal | undefined },
): Promise<AgentUIStreamRun> {
  const controller = new AbortController();
  const signal = options.signal === undefined ? controller.signal : AbortSignal.any([controller.signal, options.signal]);
  const tokens = await AgentUIStreamTokenCodec.forStore(session.client.store);
  return {
    context: { session, tokens, records: new AgentSessionRecordReader(session, signal), isFinishingWhenAwaitingApproval: options.isFinishingWhenAwaitingApproval, signal },
    abort: () => controller.abort(),
  };
}

/** The position before a turn's first event, with nothing sent yet. */
export function turnStartPosition(turnId: string, origin: string | null): AgentUIStreamPosition {
  return { turnId, turnOrigin: origin, after: origin, partsSent: 0, partsSentEventIndex: null, state: initialAgentUIStreamState() };
}

/** The source a response pulls from. */
export function agentUIStreamSource(run: AgentUIStreamRun, items: AsyncGenerator<AgentUIStreamItem>, description: string): AgentUIStreamSource {
  return { items, abort: run.abort, signal: run.context.signal, description };
}
