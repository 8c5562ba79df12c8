import type { Client } from "@perdure/engine";
import { pollUntil } from "@perdure/engine/testing";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { durableWaitTimerId } from "../session/built-in-tools/durable-wait-timer.ts";
import type { AnswerQuestionInput } from "../session/rpcs/answer-question.ts";
import type { ExecutePlanInput } from "../session/rpcs/execute-plan.ts";
import type { SteerUserMessageInput } from "../session/rpcs/turn-control-rpcs.ts";
import { toolTaskPollTimerId } from "../session/steps/poll-tool-task.ts";
import type { ListAgentMessagesInput, ResolveInterruptInput } from "../session/rpcs/session-rpcs.ts";
import type { AgentMessagePage } from "../contract/values/agent-message-page.ts";
import type { AgentEvent } from "../contract/values/agent-event.ts";
import type { AgentInterrupt } from "../contract/values/agent-interrupt.ts";
import type { AgentSnapshot } from "../contract/values/agent-snapshot.ts";
import type { AgentState } from "../contract/values/agent-state.ts";
import type { SessionSettings } from "../contract/values/session-settings.ts";
import { validateSessionSettings } from "../session/settings/session-settings-limits.ts";

/** Options of the waits of {@link AgentSessionTestClient}. */
export interface AgentSessionWaitOptions {
  /** @default 60_000 */
  timeoutMs?: number;
}

/** How long the RPCs that lock an Attribute keep calling again while a running Step holds it. */
function lockRetry(options: AgentSessionWaitOptions): { lockConflictRetryMs: number } {
  return { lockConflictRetryMs: options.timeoutMs ?? 60_000 };
}

/**
 * Typed calls to one session Flow for tests, with waits on committed state
 * that need no Worker of their own.
 *
 * @example
 * const sessions = new AgentSessionTestClient(client, flow);
 * await sessions.startSession("s1", { initialMessage: "hello" });
 * await sessions.waitForTurnCount("s1", 1);
 */
export class AgentSessionTestClient {
  readonly client: Client;
  readonly flow: AgentSessionFlow;

  constructor(client: Client, flow: AgentSessionFlow) {
    this.client = client;
    this.flow = flow;
  }

  /**
   * Starts a session, optionally with its first message and its settings,
   * which `validateSessionSettings` checks first (a `TypeError` starts nothing).
   */
  async startSession(sessionId: string, input: { initialMessage?: string; sessionSettings?: SessionSettings } = {}): Promise<void> {
    if (input.sessionSettings !== undefined) validateSessionSettings(input.sessionSettings);
    await this.client.start(this.flow, sessionId, {
      ...(input.initialMessage === undefined ? {} : { initial_message: input.initialMessage }),
      ...(input.sessionSettings === undefined ? {} : { session_settings: input.sessionSettings }),
    });
  }

  /** Same as {@link AgentSessionTestClient.startSession}. */
  start(sessionId: string, input: { initialMessage?: string; sessionSettings?: SessionSettings } = {}): Promise<void> {
    return this.startSession(sessionId, input);
  }

  /** `update_session_settings`: replaces the settings (`{}` clears them); the next turn starts with them. */
  updateSessionSettings(sessionId: string, sessionSettings: SessionSettings | null): Promise<boolean> {
    return this.client.invokeRPC(this.flow.updateSessionSettings, sessionId, { sessionSettings });
  }

  sendUserMessage(sessionId: string, text: string, options: { planMode?: boolean } = {}): Promise<boolean> {
    return this.client.invokeRPC(this.flow.sendUserMessage, sessionId, { text, planMode: options.planMode ?? false });
  }

  /** `resolve_interrupt`, called again while a running Step holds `PendingInterrupts`, as the contract advises. */
  resolveInterrupt(sessionId: string, input: ResolveInterruptInput, options: AgentSessionWaitOptions = {}): Promise<boolean> {
    return this.client.invokeRPC(this.flow.resolveInterrupt, sessionId, input, lockRetry(options));
  }

  /** `answer_question`, called again while a running Step holds `PendingInterrupts`. */
  answerQuestion(sessionId: string, input: AnswerQuestionInput, options: AgentSessionWaitOptions = {}): Promise<boolean> {
    return this.client.invokeRPC(this.flow.answerQuestion, sessionId, input, lockRetry(options));
  }

  /** `execute_plan`, called again while a running Step holds `PendingPlanExecution`. */
  executePlan(sessionId: string, input: ExecutePlanInput, options: AgentSessionWaitOptions = {}): Promise<boolean> {
    return this.client.invokeRPC(this.flow.executePlan, sessionId, input, lockRetry(options));
  }

  /** `steer_user_message`: new text, or a queued message by its Channel message ID (exactly one). */
  steerUserMessage(sessionId: string, input: SteerUserMessageInput): Promise<boolean> {
    return this.client.invokeRPC(this.flow.steerUserMessage, sessionId, input);
  }

  /** `delete_queued_message`. */
  deleteQueuedMessage(sessionId: string, messageId: string): Promise<boolean> {
    return this.client.invokeRPC(this.flow.deleteQueuedMessage, sessionId, { messageId });
  }

  /** `cancel_turn` (null for the active turn), called again while a short Step holds `TurnCancellationRequest` or `PendingInterrupts`. */
  cancelTurn(sessionId: string, turnId: string | null = null, options: AgentSessionWaitOptions = {}): Promise<boolean> {
    return this.client.invokeRPC(this.flow.cancelTurn, sessionId, { turnId }, lockRetry(options));
  }

  /** Polls a tool task now: fires the Timer of its next poll. Returns how many Timers fired. */
  skipToolTaskPoll(sessionId: string, toolCallId: string): Promise<number> {
    return this.client.skipTimer(sessionId, toolTaskPollTimerId(toolCallId));
  }

  /**
   * Ends a `durable_wait` now: fires the call's Timer (SkipTimer), so a test
   * of a one-day wait takes no day. Returns how many Timers fired: 1 while
   * the call waits in `AwaitTimer`, 0 before or after.
   */
  skipTimer(sessionId: string, toolCallId: string): Promise<number> {
    return this.client.skipTimer(sessionId, durableWaitTimerId(toolCallId));
  }

  getAgentSnapshot(sessionId: string): Promise<AgentSnapshot> {
    return this.client.invokeRPC(this.flow.getAgentSnapshot, sessionId);
  }

  listAgentMessages(sessionId: string, input: ListAgentMessagesInput = {}): Promise<AgentMessagePage> {
    return this.client.invokeRPC(this.flow.listAgentMessages, sessionId, input);
  }

  /** Waits until the committed `AgentState` satisfies `predicate`. */
  waitForState(sessionId: string, predicate: (state: AgentState) => boolean, options: AgentSessionWaitOptions = {}): Promise<AgentState> {
    return pollUntil(async () => {
      const [state] = await this.client.getAttributes(sessionId, this.flow.agentState);
      return state !== undefined && predicate(state) ? state : undefined;
    }, { timeoutMs: options.timeoutMs ?? 60_000, description: `session ${sessionId} to reach the awaited state` });
  }

  /** Waits until `count` turns have started and the session has no active turn. */
  waitForTurnCount(sessionId: string, count: number, options: AgentSessionWaitOptions = {}): Promise<AgentState> {
    return this.waitForState(sessionId, (state) => state.turnCount >= count && state.activeTurnId === null, options);
  }

  /** Waits until at least `count` interrupts are pending and returns them. */
  waitForPendingInterrupts(sessionId: string, count = 1, options: AgentSessionWaitOptions = {}): Promise<AgentInterrupt[]> {
    return pollUntil(async () => {
      const [pending] = await this.client.getAttributes(sessionId, this.flow.pendingInterrupts);
      return pending !== undefined && pending.length >= count ? pending : undefined;
    }, { timeoutMs: options.timeoutMs ?? 60_000, description: `${count} pending interrupt(s) in session ${sessionId}` });
  }

  /** The retained `AgentEvents` of the session, oldest first. */
  async readEvents(sessionId: string): Promise<AgentEvent[]> {
    const events: AgentEvent[] = [];
    let after: string | undefined;
    for (;;) {
      const read = await this.client.readStream(sessionId, this.flow.agentEvents, { limit: 1000, ...(after === undefined ? {} : { after }) });
      events.push(...read.messages.map((message) => message.value));
      if (read.messages.length < 1000) return events;
      after = read.nextToken;
    }
  }
}
