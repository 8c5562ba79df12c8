import { describeValue, rpc } from "@perdure/engine";
import { readAgentMessagePage } from "../messages/list-agent-messages-page.ts";
import { readStoredMessages } from "../messages/stored-messages-reader.ts";
import type { AgentMessagePage } from "../../contract/values/agent-message-page.ts";
import type { AgentPlan } from "../../contract/values/agent-plan.ts";
import type { AgentSnapshot } from "../../contract/values/agent-snapshot.ts";
import { emptyAgentUsage } from "../../contract/values/agent-usage.ts";
import { checkClientMessageId } from "../../contract/values/agent-user-message.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isoNow, isPastInterruptDeadline } from "../session-operations.ts";
import { createAnswerQuestionRpc } from "./answer-question.ts";
import { createExecutePlanRpc } from "./execute-plan.ts";
import { createUpdateSessionSettingsRpc } from "./update-session-settings.ts";
import { requireRunningSession } from "./require-running-session.ts";
import { inputField, inputObject } from "./rpc-input.ts";
import { ensureQueuedUserMessageRoom, queuedUserMessageRoom } from "./queued-user-message-room.ts";
import { acceptedUserMessage } from "./user-message-input.ts";
import { createTurnControlRpcs } from "./turn-control-rpcs.ts";
import { createScheduledTurnRpcs } from "../schedules/scheduled-turn-rpcs.ts";

/** Input of `send_user_message`. */
export interface SendUserMessageInput {
  text: string;
  /** @default false */
  planMode?: boolean;
  /**
   * The client's ID of the message, kept as its UI message ID (1 to 128
   * characters, no control characters). A Perdure extension.
   * @default none: the UI ID is `message-<sequence>`
   */
  clientMessageId?: string;
}

/** Input of `resolve_interrupt`. */
export interface ResolveInterruptInput {
  interruptId: string;
  approved: boolean;
  /** @default null */
  rejectionMessage?: string | null;
}

/** Input of `list_agent_messages`. */
export interface ListAgentMessagesInput {
  /** Messages before this sequence; null for the newest. @default null */
  beforeSequence?: number | null;
  /** Clamped to 1..200. @default 50 */
  limit?: number | null;
}


function parseSendUserMessage(raw: unknown): SendUserMessageInput {
  const object = inputObject(raw, "send_user_message");
  const text = object.text;
  const planMode = inputField(object, "planMode", "plan_mode") ?? false;
  if (typeof text !== "string") throw new TypeError(`text must be a string, got ${describeValue(text)}`);
  if (typeof planMode !== "boolean") throw new TypeError(`planMode must be a boolean, got ${describeValue(planMode)}`);
  const clientMessageId = checkClientMessageId(inputField(object, "clientMessageId", "client_message_id"));
  return { text, planMode, ...(clientMessageId === undefined ? {} : { clientMessageId }) };
}

function parseResolveInterrupt(raw: unknown): ResolveInterruptInput {
  const object = inputObject(raw, "resolve_interrupt");
  const interruptId = inputField(object, "interruptId", "interrupt_id");
  const approved = object.approved;
  const rejectionMessage = inputField(object, "rejectionMessage", "rejection_message") ?? null;
  if (typeof interruptId !== "string" || interruptId === "") throw new TypeError(`interruptId must be a non-empty string, got ${describeValue(interruptId)}`);
  if (typeof approved !== "boolean") throw new TypeError(`approved must be a boolean, got ${describeValue(approved)}`);
  if (rejectionMessage !== null && typeof rejectionMessage !== "string") throw new TypeError(`rejectionMessage must be a string or null, got ${describeValue(rejectionMessage)}`);
  return { interruptId, approved, rejectionMessage };
}

function parseListAgentMessages(raw: unknown): { beforeSequence: number | null; limit: number } {
  const object = raw === undefined || raw === null ? {} : inputObject(raw, "list_agent_messages");
  const before = inputField(object, "beforeSequence", "before_sequence") ?? null;
  const limit = object.limit ?? null;
  if (before !== null && (typeof before !== "number" || !Number.isSafeInteger(before))) throw new TypeError(`beforeSequence must be an integer or null, got ${describeValue(before)}`);
  if (limit !== null && (typeof limit !== "number" || !Number.isFinite(limit))) throw new TypeError(`limit must be a number or null, got ${describeValue(limit)}`);
  return { beforeSequence: before, limit: limit === null ? 50 : Math.min(200, Math.max(1, Math.trunc(limit))) };
}

/** The snapshot's `plan`, omitted while there is none (its default). */
function planField(plan: AgentPlan | undefined): { plan?: AgentPlan } {
  return plan === undefined ? {} : { plan };
}

/** The session's RPCs, with the contract's names, inputs, outputs and refusals. */
export function createSessionRpcs(environment: SessionEnvironment) {
  const { persistence, options } = environment;
  return {
    sendUserMessage: rpc<SendUserMessageInput, boolean>({
      name: "send_user_message",
      parseInput: parseSendUserMessage,
      handler: async (context, input) => {
        requireRunningSession(context, "send_user_message");
        const message = acceptedUserMessage(input.text, input.planMode, options, context, input.clientMessageId);
        if (message === false) return false;
        await ensureQueuedUserMessageRoom(context, environment, message);
        await context.publish(persistence.queuedUserMessages, message);
        return true;
      },
      // The usual call as one store request: the same message, published while the session runs and
      // ensureQueuedUserMessageRoom's bound holds; anything else (a refusal among them) runs the handler.
      publishes: (context, input) => {
        const message = acceptedUserMessage(input.text, input.planMode, options, context, input.clientMessageId);
        if (message === false) return undefined;
        return { messages: [{ channel: persistence.queuedUserMessages, message }], output: true, room: queuedUserMessageRoom(environment) };
      },
    }),
    resolveInterrupt: rpc<ResolveInterruptInput, boolean>({
      name: "resolve_interrupt",
      parseInput: parseResolveInterrupt,
      locks: [persistence.pendingInterrupts],
      handler: async (context, input) => {
        requireRunningSession(context, "resolve_interrupt");
        const pending = (await context.read(persistence.pendingInterrupts)) ?? [];
        const interrupt = pending.find((candidate) => candidate.interruptId === input.interruptId);
        if (interrupt === undefined) return false;
        if (isPastInterruptDeadline(context, interrupt.deadline)) return false;
        if (interrupt.kind === "question" && input.approved) return false;
        await context.write(persistence.pendingInterrupts, pending.filter((candidate) => candidate.interruptId !== input.interruptId));
        await context.publish(persistence.interruptResolutions.instance(input.interruptId), {
          interruptId: input.interruptId,
          approved: input.approved,
          rejectionMessage: input.approved ? null : (input.rejectionMessage ?? null),
          resolvedAt: isoNow(context),
        });
        return true;
      },
    }),
    answerQuestion: createAnswerQuestionRpc(environment),
    ...createTurnControlRpcs(environment),
    executePlan: createExecutePlanRpc(environment),
    updateSessionSettings: createUpdateSessionSettingsRpc(environment),
    ...createScheduledTurnRpcs(environment),
    getAgentSnapshot: rpc<undefined, AgentSnapshot>({
      name: "get_agent_snapshot",
      handler: async (context) => {
        const index = await context.read(persistence.agentMessageIndex);
        const messages = await readStoredMessages(context, persistence, index);
        const toolCalls = [];
        for (const key of await context.keys(persistence.agentToolCalls)) {
          const record = await context.read(persistence.agentToolCalls.instance(key));
          if (record !== undefined) toolCalls.push(record);
        }
        toolCalls.sort((left, right) => left.deferralOrder - right.deferralOrder);
        const queued = await context.listMessages(persistence.queuedUserMessages);
        const steered = await context.listMessages(persistence.steeredUserMessages);
        return {
          state: (await context.read(persistence.agentState)) ?? null,
          messages,
          pendingInterrupts: (await context.read(persistence.pendingInterrupts)) ?? [],
          toolCalls,
          usage: (await context.read(persistence.agentUsage)) ?? emptyAgentUsage(),
          queuedMessageCount: queued.length,
          ...planField(await context.read(persistence.agentPlan)),
          queuedMessages: queued.map((entry) => ({ ...entry.message, messageId: entry.messageId })),
          steeredMessages: steered.map((entry) => ({ ...entry.message, messageId: entry.messageId })),
          contextSummary: (await context.read(persistence.contextSummary)) ?? null,
          sessionSettings: (await context.read(persistence.sessionSettings)) ?? {},
          scheduledTurns: (await context.read(persistence.scheduledTurns))?.schedules ?? [],
        };
      },
    }),
    listAgentMessages: rpc<ListAgentMessagesInput | undefined, AgentMessagePage>({
      name: "list_agent_messages",
      parseInput: parseListAgentMessages,
      handler: async (context, input) => {
        return readAgentMessagePage(context, persistence, input?.beforeSequence ?? null, input?.limit ?? 50);
      },
    }),
  };
}
