/**
 * The read loop of a UI message stream: follows one turn's events from a
 * position, turns each into its parts, pairs every part with the token that
 * continues after it, and ends once committed state confirms the turn's end,
 * or that it waits only for approvals and questions.
 */
import type { AgentEvent } from "../contract/values/agent-event.ts";
import {
  planAgentEventParts,
  planAwaitingApprovalParts,
  planTurnEndParts,
  type PlannedAgentUIPart,
  type PlannedStandalonePart,
} from "./agent-event-parts.ts";
import { commitWaitMs, type AgentSessionRecordReader } from "./agent-session-record-reader.ts";
import type { AgentUIMessageChunk } from "./agent-ui-message-types.ts";
import type { AgentUIStreamSession } from "./agent-ui-stream-session.ts";
import type { AgentUIStreamPosition, AgentUIStreamTokenCodec } from "./agent-ui-stream-token.ts";
import { planChunk } from "./plan-chunks.ts";
import { toolOutcomeChunk } from "./tool-outcome-chunks.ts";

/** A part and the resume token that continues the stream right after it. */
export interface AgentUIStreamItem {
  chunk: AgentUIMessageChunk;
  token: string;
}

/** What the read loop needs. */
export interface AgentUIStreamContext {
  session: AgentUIStreamSession;
  tokens: AgentUIStreamTokenCodec;
  records: AgentSessionRecordReader;
  /** End the stream with `tool-calls` while the turn waits only for approvals and questions. */
  isFinishingWhenAwaitingApproval: boolean;
  signal: AbortSignal;
}

const readLimit = 100;
/** Between status checks while the turn's end may be about to commit. */
const endWindowPollMs = 50;
/** Between status checks otherwise; new events wake the read at once. */
const idlePollMs = 1000;

/** Fills in a planned part's content from committed records. */
async function materialize(context: AgentUIStreamContext, turnId: string, part: PlannedAgentUIPart): Promise<AgentUIMessageChunk> {
  switch (part.kind) {
    case "chunk":
      return part.chunk;
    case "tool-input":
      return {
        type: "tool-input-available",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: await context.records.readToolInput(turnId, part.toolCallId),
        dynamic: true,
      };
    case "tool-output": {
      const result = await context.records.readToolResult(turnId, part.toolCallId);
      if (part.status === "succeeded") return { type: "tool-output-available", toolCallId: part.toolCallId, output: result.text, dynamic: true };
      const errorText = part.status === "failed" ? (result.error ?? result.text) : (result.text ?? result.error);
      return { type: "tool-output-error", toolCallId: part.toolCallId, errorText: errorText ?? `the tool call ${part.status}`, dynamic: true };
    }
    case "plan":
      return planChunk(part, await context.records.readPlan());
  }
}

/** Sends parts that each carry the state after them (prelude, turn end, approvals). */
async function* sendStandaloneParts(
  context: AgentUIStreamContext,
  position: AgentUIStreamPosition,
  items: readonly PlannedStandalonePart[],
): AsyncGenerator<AgentUIStreamItem, AgentUIStreamPosition> {
  let current = position;
  for (const item of items) {
    current = { ...current, partsSent: 0, partsSentEventIndex: null, state: item.state };
    yield { chunk: await materialize(context, current.turnId, item.part), token: context.tokens.encode(context.session.flowId, current) };
  }
  return current;
}

/** Options of {@link followAgentTurn}. */
export interface FollowAgentTurnOptions {
  /**
   * Calls whose outcome the browser waits for (approved in this request).
   * When the turn's events were lost, their committed outcomes precede the end.
   * @default []
   */
  awaitedToolCallIds?: readonly string[];
}

/** The committed outcomes of awaited calls, for a turn whose events were lost. */
async function planAwaitedOutcomes(context: AgentUIStreamContext, position: AgentUIStreamPosition, toolCallIds: readonly string[]): Promise<PlannedStandalonePart[]> {
  if (!position.state.eventsLost) return [];
  const items: PlannedStandalonePart[] = [];
  for (const toolCallId of toolCallIds) {
    const chunk = toolOutcomeChunk(toolCallId, await context.records.readToolOutcomeNow(position.turnId, toolCallId));
    if (chunk !== undefined) items.push({ part: { kind: "chunk", chunk }, state: position.state });
  }
  return items;
}

/**
 * Streams the turn of `start` from its position to its end. `prelude` parts
 * go first (the outcomes of decisions an approval request could not apply).
 *
 * @example
 * for await (const item of followAgentTurn(context, position, [])) send(item.chunk, item.token);
 */
export async function* followAgentTurn(
  context: AgentUIStreamContext,
  start: AgentUIStreamPosition,
  prelude: readonly PlannedStandalonePart[] = [],
  options: FollowAgentTurnOptions = {},
): AsyncGenerator<AgentUIStreamItem> {
  const { session, tokens, records, signal } = context;
  const { client, flow, flowId } = session;
  let position = yield* sendStandaloneParts(context, start, prelude);
  if (position.state.done) return;
  let isCaughtUp = false;
  let isEndConfirmed = false;
  let turnEndSeenAt: number | null = null;
  for (;;) {
    if (signal.aborted) return;
    const waitMs = !isCaughtUp || isEndConfirmed ? 0 : turnEndSeenAt !== null && Date.now() - turnEndSeenAt < commitWaitMs ? endWindowPollMs : idlePollMs;
    const read = await client.readStream(flowId, flow.agentEvents, { limit: readLimit, waitMs, signal, ...(position.after === null ? {} : { after: position.after }) });
    if (read.lost && position.state.started && !position.state.eventsLost) {
      position = { ...position, state: { ...position.state, eventsLost: true } };
    }
    for (const message of read.messages) {
      const event: AgentEvent = message.value;
      if (event.turnId !== position.turnId) {
        position = { ...position, after: message.token };
        continue;
      }
      let before = position.state;
      let firstPart = 0;
      if (position.partsSent > 0) {
        // The token fell between two parts of this event; an event trimmed since then is lost.
        if (position.partsSentEventIndex === message.index) firstPart = position.partsSent;
        else before = { ...before, eventsLost: true };
      }
      const planned = planAgentEventParts(before, event);
      for (let index = firstPart; index < planned.parts.length; index += 1) {
        const part = planned.parts[index];
        if (part === undefined) continue;
        const isLast = index === planned.parts.length - 1;
        const tokenPosition: AgentUIStreamPosition = isLast
          ? { ...position, after: message.token, partsSent: 0, partsSentEventIndex: null, state: planned.state }
          : { ...position, partsSent: index + 1, partsSentEventIndex: message.index, state: before };
        const chunk = await materialize(context, position.turnId, part);
        yield { chunk, token: tokens.encode(flowId, tokenPosition) };
      }
      position = { ...position, after: message.token, partsSent: 0, partsSentEventIndex: null, state: planned.state };
      if (planned.state.turnEnd === null) turnEndSeenAt = null;
      else turnEndSeenAt ??= Date.now();
      if (planned.state.done) return;
    }
    if (read.messages.length > 0) {
      isCaughtUp = false;
      continue;
    }
    if (signal.aborted) return;
    if (isEndConfirmed) {
      position = yield* sendStandaloneParts(context, position, await planAwaitedOutcomes(context, position, options.awaitedToolCallIds ?? []));
      yield* sendStandaloneParts(context, position, planTurnEndParts(position.state, position.turnId));
      return;
    }
    isCaughtUp = true;
    const status = await records.readTurnStatus(position.turnId, position.state.shownToolCallIds, position.state.eventsLost);
    if (status.isEnded) {
      // Events reach the Stream before their commit, so one more read sees every event of the turn.
      isEndConfirmed = true;
    } else if (context.isFinishingWhenAwaitingApproval && status.awaitingPeople !== null) {
      const { approvals, questions } = status.awaitingPeople;
      yield* sendStandaloneParts(context, position, planAwaitingApprovalParts(position.state, position.turnId, approvals, questions));
      return;
    }
  }
}
