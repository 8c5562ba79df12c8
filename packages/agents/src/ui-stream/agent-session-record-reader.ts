/**
 * Committed session state the UI stream needs besides events: whether a
 * turn's end committed, whether it waits only for approvals and questions,
 * tool call arguments and results, and the plan, which events do not carry.
 */
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import type { AgentPlan } from "../contract/values/agent-plan.ts";
import { isFinalToolCallStatus, type AgentToolCallRecord } from "../contract/values/agent-tool-call.ts";
import type { AgentMessagePage } from "../contract/values/agent-message-page.ts";
import type { AgentMessage } from "../contract/values/agent-message.ts";
import type { PendingApprovalCall } from "./agent-event-parts.ts";
import type { AgentQuestionChunk } from "../contract/ui-stream/data-parts.ts";
import { questionChunkFromInterrupt } from "./agent-ui-data-parts.ts";
import { delay, turnNumber, type AgentUIStreamSession } from "./agent-ui-stream-session.ts";
import { parseToolCallArguments, readStoredToolCalls } from "./stored-tool-calls.ts";

/**
 * How long the stream waits for the commit that follows an event: a turn's
 * end, or a tool call record. Events reach the Stream before their commit.
 */
export const commitWaitMs = 3000;

const recordPollMs = 25;
const storedMessagesPollMs = 250;
const storedMessagePageLimit = 200;
const storedMessagePageCount = 10;
/** The longest key of a ChannelMap or AttributeMap instance, so the longest tool call ID a record can have. */
const maxToolCallIdLength = 512;

/** What committed state says about a streamed turn. */
export interface AgentTurnStatus {
  /** The turn's end committed. */
  isEnded: boolean;
  /**
   * The approvals and questions the turn waits for, when it waits for
   * nothing else (no call runs, no timer or task is pending); otherwise null.
   */
  awaitingPeople: { approvals: PendingApprovalCall[]; questions: AgentQuestionChunk[] } | null;
}

/** A tool call's result text and error, as the record or the stored result message has them. */
export interface AgentToolResult {
  text: string | null;
  error: string | null;
}

/** A tool call's outcome as committed at one moment. */
export type AgentToolOutcome =
  | { kind: "final"; record: AgentToolCallRecord }
  | { kind: "in_progress" }
  | { kind: "stored"; text: string }
  | { kind: "unknown" };

interface StoredToolCallDetails {
  input?: unknown;
  resultText?: string;
}

/** Reads committed state of one session, waiting briefly where a commit follows an event. */
export class AgentSessionRecordReader {
  private readonly session: AgentUIStreamSession;
  private readonly signal: AbortSignal | undefined;
  private readonly storedDetails = new Map<string, StoredToolCallDetails>();

  constructor(session: AgentUIStreamSession, signal: AbortSignal | undefined) {
    this.session = session;
    this.signal = signal;
  }

  /** Whether `turnId` ended, or waits only for people; `knownToolCallIds` are the current response's calls. */
  async readTurnStatus(turnId: string, knownToolCallIds: readonly string[], isEventsLost: boolean): Promise<AgentTurnStatus> {
    const { client, flow, flowId } = this.session;
    const [state, pending] = await client.getAttributes(flowId, flow.agentState, flow.pendingInterrupts);
    const notWaiting = { isEnded: false, awaitingPeople: null };
    const ended = { isEnded: true, awaitingPeople: null };
    const number = turnNumber(turnId);
    if (state !== undefined && state.activeTurnId !== turnId && (number === null || state.turnCount >= number)) return ended;
    if (state?.activeTurnId !== turnId) {
      // A turn that has not started never will once the session is stopped or finished.
      return (await client.describe(flowId)).status === "running" ? notWaiting : ended;
    }
    if (state.status !== "running_tools") return notWaiting;
    const interrupts = (pending ?? []).filter((interrupt) => interrupt.turnId === turnId);
    if (interrupts.length === 0) return notWaiting;
    const records = isEventsLost
      ? (await client.invokeRPC(flow.getAgentSnapshot, flowId)).toolCalls.filter((record) => record.turnId === turnId)
      : await this.readRecords([...new Set([...knownToolCallIds, ...interrupts.map((interrupt) => interrupt.toolCallId)])]);
    const interruptOf = (record: AgentToolCallRecord, kind: AgentInterrupt["kind"]) =>
      interrupts.find((interrupt) => interrupt.toolCallId === record.toolCallId && interrupt.kind === kind);
    const isWaitingForPerson = (record: AgentToolCallRecord): boolean =>
      (record.status === "awaiting_approval" && interruptOf(record, "approval") !== undefined)
      || (record.status === "awaiting_answer" && interruptOf(record, "question") !== undefined);
    const isWaitingOnlyForPeople = records.length > 0
      && records.every((record) => isFinalToolCallStatus(record.status) || isWaitingForPerson(record))
      && interrupts.every((interrupt) => records.some((record) => record.toolCallId === interrupt.toolCallId));
    if (!isWaitingOnlyForPeople) return notWaiting;
    const waiting = records.filter((record) => !isFinalToolCallStatus(record.status)).sort((left, right) => left.deferralOrder - right.deferralOrder);
    const approvals = waiting.flatMap((record) => {
      const interrupt = record.status === "awaiting_approval" ? interruptOf(record, "approval") : undefined;
      return interrupt === undefined ? [] : [{ approvalId: interrupt.interruptId, toolCallId: record.toolCallId, toolName: record.toolName }];
    });
    const questions = waiting.flatMap((record) => {
      const interrupt = record.status === "awaiting_answer" ? interruptOf(record, "question") : undefined;
      return interrupt === undefined ? [] : [questionChunkFromInterrupt(interrupt)];
    });
    return { isEnded: false, awaitingPeople: { approvals, questions } };
  }

  private async readRecords(toolCallIds: readonly string[]): Promise<AgentToolCallRecord[]> {
    // IDs from the browser may be anything; one that cannot be a record's key has no record.
    const keys = toolCallIds.filter((toolCallId) => toolCallId.length > 0 && toolCallId.length <= maxToolCallIdLength);
    if (keys.length === 0) return [];
    const { client, flow, flowId } = this.session;
    const records = await client.getAttributes(flowId, ...keys.map((toolCallId) => flow.agentToolCalls.instance(toolCallId)));
    return records.filter((record): record is AgentToolCallRecord => record !== undefined);
  }

  /** The call's committed record while its turn keeps it, else undefined. */
  async readRecord(turnId: string, toolCallId: string): Promise<AgentToolCallRecord | undefined> {
    const [record] = await this.readRecords([toolCallId]);
    return record?.turnId === turnId ? record : undefined;
  }

  /**
   * Waits up to {@link commitWaitMs} for `check` to find the value in the
   * committed record or, once a later commit deleted the record, in the
   * stored messages.
   */
  private async waitForCommitted<TValue>(
    turnId: string,
    toolCallId: string,
    fromRecord: (record: AgentToolCallRecord) => TValue | undefined,
    fromStored: (details: StoredToolCallDetails) => TValue | undefined,
  ): Promise<TValue | undefined> {
    const deadline = Date.now() + commitWaitMs;
    let storedCheckedAt = 0;
    for (;;) {
      const record = await this.readRecord(turnId, toolCallId);
      const recorded = record === undefined ? undefined : fromRecord(record);
      if (recorded !== undefined) return recorded;
      if (Date.now() - storedCheckedAt >= storedMessagesPollMs) {
        storedCheckedAt = Date.now();
        const stored = fromStored(await this.readStoredDetails(turnId, toolCallId));
        if (stored !== undefined) return stored;
      }
      if (Date.now() >= deadline || this.signal?.aborted === true) return undefined;
      await delay(recordPollMs, this.signal);
    }
  }

  /** The session's committed plan, or undefined before `write_todos` first succeeded. */
  async readPlan(): Promise<AgentPlan | undefined> {
    const { client, flow, flowId } = this.session;
    const [plan] = await client.getAttributes(flowId, flow.agentPlan);
    return plan;
  }

  /** The call's parsed arguments, or null when no commit records them within the wait. */
  async readToolInput(turnId: string, toolCallId: string): Promise<unknown> {
    const input = await this.waitForCommitted(turnId, toolCallId, (record) => ({ value: parseToolCallArguments(record.arguments) }), (details) =>
      (Object.hasOwn(details, "input") ? { value: details.input } : undefined));
    return input?.value ?? null;
  }

  /** The call's result once its final status committed; both null when none commits within the wait. */
  async readToolResult(turnId: string, toolCallId: string): Promise<AgentToolResult> {
    const result = await this.waitForCommitted<AgentToolResult>(
      turnId,
      toolCallId,
      (record) => (isFinalToolCallStatus(record.status) ? { text: record.output, error: record.error } : undefined),
      (details) => (details.resultText === undefined ? undefined : { text: details.resultText, error: null }),
    );
    return result ?? { text: null, error: null };
  }

  /**
   * A call's outcome as committed now, without waiting: its final record, a
   * record still in progress, the stored result text once the record is
   * gone, or nothing known.
   */
  async readToolOutcomeNow(turnId: string, toolCallId: string): Promise<AgentToolOutcome> {
    const record = await this.readRecord(turnId, toolCallId);
    if (record !== undefined) return isFinalToolCallStatus(record.status) ? { kind: "final", record } : { kind: "in_progress" };
    const stored = await this.readStoredDetails(turnId, toolCallId);
    return stored.resultText === undefined ? { kind: "unknown" } : { kind: "stored", text: stored.resultText };
  }

  /** A tool call's arguments and result text from the stored messages of its turn; cached once complete. */
  private async readStoredDetails(turnId: string, toolCallId: string): Promise<StoredToolCallDetails> {
    const key = `${turnId}\u0000${toolCallId}`;
    const cached = this.storedDetails.get(key);
    if (cached !== undefined) return cached;
    const details: StoredToolCallDetails = {};
    for (const message of await this.readStoredTurnMessages(turnId)) {
      if (message.role === "assistant") {
        const call = readStoredToolCalls(message.frameworkItem).find((candidate) => candidate.toolCallId === toolCallId);
        if (call !== undefined) details.input = call.input;
      } else if (message.role === "tool" && message.toolCallId === toolCallId) {
        details.resultText = message.text;
      }
    }
    if (Object.hasOwn(details, "input") && details.resultText !== undefined) this.storedDetails.set(key, details);
    return details;
  }

  /** The stored messages of one turn, newest pages first, stopping at an older turn. */
  private async readStoredTurnMessages(turnId: string): Promise<AgentMessage[]> {
    const { client, flow, flowId } = this.session;
    const number = turnNumber(turnId);
    const messages: AgentMessage[] = [];
    let beforeSequence: number | null = null;
    for (let page = 0; page < storedMessagePageCount; page += 1) {
      const listed: AgentMessagePage = await client.invokeRPC(flow.listAgentMessages, flowId, { beforeSequence, limit: storedMessagePageLimit });
      messages.unshift(...listed.messages.filter((message) => message.turnId === turnId));
      const oldest = listed.messages[0];
      const oldestNumber = oldest?.turnId === null || oldest?.turnId === undefined ? null : turnNumber(oldest.turnId);
      const isPastTurn = oldest === undefined || (number !== null && oldestNumber !== null && oldestNumber < number);
      if (isPastTurn || listed.nextBeforeSequence === null) break;
      beforeSequence = listed.nextBeforeSequence;
    }
    return messages;
  }
}
