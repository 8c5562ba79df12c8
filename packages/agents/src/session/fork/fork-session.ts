/**
 * `forkSession`: a new session whose state is another's at a turn boundary.
 * It inherits the transcript, settings, plan, summary, usage, the
 * records of the turns before the boundary and what their chat showed
 * (approvals, the client's user message IDs), and runs nothing: the whole fork
 * is one commit (the new Flow starts with these Attributes), so a crash
 * leaves either no fork or a complete one, and the source is only read.
 */
import { createHash, randomBytes } from "node:crypto";
import { describeValue, InvalidInputError, type Client, type InitialAttribute } from "@perdure/engine";
import { isoNow } from "../session-operations.ts";
import type { AgentState } from "../../contract/values/agent-state.ts";
import type { SessionLineage } from "../../contract/values/session-lineage.ts";
import type { AgentSessionFlow } from "../create-agent-session-flow.ts";
import { readSessionBoundary, type SessionBoundary } from "./read-session-boundary.ts";

/** What `forkSession` takes. */
export interface ForkSessionOptions {
  /** The session to fork. It is only read. */
  sourceSessionId: string;
  /**
   * How many of the source's turns the fork keeps: it continues after
   * `turn-<throughTurn>`. To edit and resend the user message that started
   * `turn-<n>`, fork through `n - 1` with the new text as `initialMessage`.
   * A turn still running cannot be kept.
   */
  throughTurn: number;
  /**
   * The new session's ID.
   * @default "<sourceSessionId>-fork-<8 random hex digits>"
   */
  sessionId?: string;
  /**
   * Starts the fork's first turn with this message, in the fork's own
   * commit: edit and resend, or retry a turn with its original text.
   * @default none: the fork waits for a message
   */
  initialMessage?: string;
  /**
   * Extra fields of the fork's start input, which the session ignores, such
   * as the owner the session HTTP API records. `initial_message` and
   * `session_settings` are refused here: the fork takes its settings from
   * the boundary and its message from `initialMessage`.
   * @default {}
   */
  startInput?: Record<string, unknown>;
}

/** What `forkSession` returns. */
export interface ForkSessionResult {
  sessionId: string;
  lineage: SessionLineage;
  /** False when a fork with this ID from the same source and turn already existed (a retried call). */
  created: boolean;
}

function resolveForkSessionId(options: ForkSessionOptions): string {
  if (options.sessionId === undefined) return `${options.sourceSessionId}-fork-${randomBytes(4).toString("hex")}`.slice(0, 256);
  if (typeof options.sessionId !== "string" || options.sessionId === "") throw new InvalidInputError(`fork sessionId ${describeValue(options.sessionId)} is invalid: use a non-empty string`);
  return options.sessionId;
}

/** The fork's start Attributes: the boundary's state, its records marked as inherited, and the lineage. */
function forkAttributes(flow: AgentSessionFlow, boundary: SessionBoundary, lineage: SessionLineage): InitialAttribute[] {
  const state: AgentState = {
    status: "waiting_for_user_message",
    activeTurnId: null,
    turnCount: boundary.throughTurn,
    messageCount: boundary.messageCount,
    lastTurnError: boundary.lastTurnError,
    createdAt: lineage.forkedAt,
    updatedAt: lineage.forkedAt,
  };
  const attributes: InitialAttribute[] = [
    { ref: flow.agentState, value: state },
    { ref: flow.agentUsage, value: boundary.usage },
    { ref: flow.pendingInterrupts, value: [] },
    { ref: flow.sessionLineage, value: lineage },
  ];
  if (boundary.plan !== null) attributes.push({ ref: flow.agentPlan, value: boundary.plan });
  if (boundary.contextSummary !== null) attributes.push({ ref: flow.contextSummary, value: boundary.contextSummary });
  if (boundary.sessionSettings !== null) attributes.push({ ref: flow.sessionSettings, value: boundary.sessionSettings });
  if (boundary.index !== undefined) attributes.push({ ref: flow.agentMessageIndex, value: boundary.index });
  for (const { key, value } of boundary.windowMessages) attributes.push({ ref: flow.agentMessages.instance(key), value });
  for (const { key, value } of boundary.chunks) attributes.push({ ref: flow.agentMessageChunks.instance(key), value });
  for (const { key, value } of boundary.checkpoints) attributes.push({ ref: flow.turnCheckpoints.instance(key), value });
  for (const { key, value } of boundary.modelCalls) attributes.push({ ref: flow.modelCalls.instance(key), value });
  for (const { key, value } of boundary.turnToolCalls) {
    // Their effects happened in the source (or further up): the fork only inherits the record.
    attributes.push({ ref: flow.turnToolCalls.instance(key), value: { ...value, inheritedFrom: value.inheritedFrom ?? lineage.sourceSessionId } });
  }
  // What the chat showed of the kept turns: their approvals and the client's message IDs (docs/decisions/2026-12-06-fork-carries-chat-records.md).
  for (const { key, value } of boundary.approvedToolCalls) attributes.push({ ref: flow.approvedToolCalls.instance(key), value });
  for (const { key, value } of boundary.userMessageClientIds) attributes.push({ ref: flow.userMessageClientIds.instance(key), value });
  return attributes;
}

/**
 * Forks a session at a turn boundary: the new session holds the source's
 * transcript, settings, plan, summary and usage as they were after
 * `throughTurn` turns, and the records of those turns' model and tool calls,
 * marked inherited. It re-runs nothing: no model call, no tool. Pending
 * approvals, questions, waits and queued messages of the source are not
 * carried over, and the source is only read.
 *
 * @example
 * // Edit the message that started turn-3 and send it again, in a new branch:
 * const { sessionId } = await forkSession(client, supportAgentFlow, { sourceSessionId: "session-1", throughTurn: 2, initialMessage: "Where is order 8?" });
 */
export async function forkSession(client: Client, flow: AgentSessionFlow, options: ForkSessionOptions): Promise<ForkSessionResult> {
  if (typeof options?.sourceSessionId !== "string" || options.sourceSessionId === "") {
    throw new InvalidInputError(`fork sourceSessionId ${describeValue(options?.sourceSessionId)} is invalid: use the ID of a session`);
  }
  if (options.initialMessage !== undefined && typeof options.initialMessage !== "string") {
    throw new InvalidInputError(`fork initialMessage ${describeValue(options.initialMessage)} is invalid: use a string`);
  }
  const source = await client.describe(options.sourceSessionId);
  if (source.flowType !== flow.flowType) {
    throw new InvalidInputError(`session ${options.sourceSessionId} is a ${source.flowType} session, not ${flow.flowType}: fork it with its own Flow`);
  }
  const sessionId = resolveForkSessionId(options);
  const boundary = await readSessionBoundary(client, flow, options.sourceSessionId, options.throughTurn);
  const lineage: SessionLineage = {
    sourceSessionId: options.sourceSessionId,
    throughTurn: boundary.throughTurn,
    inheritedMessageCount: boundary.messageCount,
    forkedAt: isoNow(client.store.clock),
  };
  const extra = options.startInput ?? {};
  if (typeof extra !== "object" || extra === null || Array.isArray(extra)) throw new InvalidInputError(`fork startInput ${describeValue(extra)} is invalid: use an object`);
  for (const key of ["initial_message", "initialMessage", "session_settings", "sessionSettings"]) {
    if (Object.hasOwn(extra, key)) throw new InvalidInputError(`fork startInput may not set ${key}: a fork takes its settings from the source and its first message from initialMessage`);
  }
  const input = { ...extra, ...(options.initialMessage === undefined ? {} : { initial_message: options.initialMessage }) };
  // The same fork asked again (a retried request) is the same start: it succeeds without a second session.
  const messageDigest = createHash("sha256").update(options.initialMessage ?? "").digest("hex").slice(0, 16);
  const requestId = `fork:${options.sourceSessionId}:${boundary.throughTurn}:${messageDigest}`;
  const { created } = await client.start(flow, sessionId, input, { attributes: forkAttributes(flow, boundary, lineage), requestId });
  if (created) return { sessionId, lineage, created };
  const [stored] = await client.getAttributes(sessionId, flow.sessionLineage);
  return { sessionId, lineage: stored ?? lineage, created };
}
