/**
 * `steer_user_message`, `delete_queued_message` and `cancel_turn`: the RPCs
 * that move a queued message into the running turn, drop it, or stop the
 * turn. Steering and deleting lock nothing; `cancel_turn` locks
 * `TurnCancellationRequest` and `PendingInterrupts`.
 */
import { describeValue, rpc, type RpcContext } from "@perdure/engine";
import { checkClientMessageId, type AgentUserMessage } from "../../contract/values/agent-user-message.ts";
import type { SessionEnvironment } from "../session-environment.ts";
import { isoNow } from "../session-operations.ts";
import { AgentStepType } from "../step-types.ts";
import { requireRunningSession } from "./require-running-session.ts";
import { inputField, inputObject } from "./rpc-input.ts";
import { ensureQueuedUserMessageRoom } from "./queued-user-message-room.ts";
import { acceptedUserMessage } from "./user-message-input.ts";

/** Input of `steer_user_message`: exactly one of `messageId` and `text`. */
export interface SteerUserMessageInput {
  /** A Channel message ID from `AgentSnapshot.queuedMessages`, or null. */
  messageId: string | null;
  /** New text, or null. */
  text: string | null;
  /** With `text`: whether the message asks for a plan. @default false */
  planMode?: boolean;
  /** With `text`: the client's ID of the message, as for `send_user_message`. A Perdure extension. @default none */
  clientMessageId?: string;
}

/** Input of `delete_queued_message`. */
export interface DeleteQueuedMessageInput {
  messageId: string;
}

/** Input of `cancel_turn`. */
export interface CancelTurnInput {
  /** The turn to cancel, or null for the active turn. @default null */
  turnId?: string | null;
}

function parseSteerUserMessage(raw: unknown): SteerUserMessageInput {
  const object = inputObject(raw, "steer_user_message");
  const messageId = inputField(object, "messageId", "message_id") ?? null;
  const text = object.text ?? null;
  const planMode = inputField(object, "planMode", "plan_mode") ?? false;
  if (messageId !== null && typeof messageId !== "string") throw new TypeError(`messageId must be a string or null, got ${describeValue(messageId)}`);
  if (text !== null && typeof text !== "string") throw new TypeError(`text must be a string or null, got ${describeValue(text)}`);
  if (typeof planMode !== "boolean") throw new TypeError(`planMode must be a boolean, got ${describeValue(planMode)}`);
  const clientMessageId = checkClientMessageId(inputField(object, "clientMessageId", "client_message_id"));
  return { messageId, text, planMode, ...(clientMessageId === undefined ? {} : { clientMessageId }) };
}

function parseDeleteQueuedMessage(raw: unknown): DeleteQueuedMessageInput {
  const messageId = inputField(inputObject(raw, "delete_queued_message"), "messageId", "message_id");
  if (typeof messageId !== "string" || messageId === "") throw new TypeError(`messageId must be a non-empty string, got ${describeValue(messageId)}`);
  return { messageId };
}

function parseCancelTurn(raw: unknown): CancelTurnInput {
  const object = raw === undefined || raw === null ? {} : inputObject(raw, "cancel_turn");
  const turnId = inputField(object, "turnId", "turn_id") ?? null;
  if (turnId !== null && (typeof turnId !== "string" || turnId === "")) throw new TypeError(`turnId must be a non-empty string or null, got ${describeValue(turnId)}`);
  return { turnId };
}

async function findQueued(context: RpcContext, environment: SessionEnvironment, messageId: string) {
  const queued = await context.listMessages(environment.persistence.queuedUserMessages);
  return queued.find((entry) => entry.messageId === messageId);
}

/** Moves a message into the active turn: `SteeredUserMessages`, and a wake on `TurnControlRequests`. */
async function steer(context: RpcContext, environment: SessionEnvironment, message: AgentUserMessage): Promise<void> {
  await context.publish(environment.persistence.steeredUserMessages, message);
  await context.publish(environment.persistence.turnControlRequests, { kind: "steer" });
}

export function createTurnControlRpcs(environment: SessionEnvironment) {
  const { persistence, options } = environment;
  return {
    /**
     * Steers the active turn with new text or a queued message. While no turn
     * is active, `text` is queued like `send_user_message` (and a queued
     * message stays queued), so it starts the next turn at once. `false` for
     * both or neither set, blank text, a message no longer queued, or a turn
     * that does not accept turn control. Fails with
     * `ChannelMessageNotFoundError` when the session consumed the message
     * while the RPC ran, and changes nothing.
     */
    steerUserMessage: rpc<SteerUserMessageInput, boolean>({
      name: "steer_user_message",
      parseInput: parseSteerUserMessage,
      handler: async (context, input) => {
        requireRunningSession(context, "steer_user_message");
        if ((input.messageId === null) === (input.text === null)) return false;
        const state = await context.read(persistence.agentState);
        const turnActive = state !== undefined && state.activeTurnId !== null;
        if (input.text !== null) {
          const message = acceptedUserMessage(input.text, input.planMode, options, context, input.clientMessageId);
          if (message === false) return false;
          await ensureQueuedUserMessageRoom(context, environment, message);
          if (!turnActive) {
            await context.publish(persistence.queuedUserMessages, message);
            return true;
          }
          if (state.acceptsTurnControl !== true) return false;
          await steer(context, environment, message);
          return true;
        }
        const messageId = input.messageId as string;
        const queued = await findQueued(context, environment, messageId);
        if (queued === undefined) return false;
        // Nothing to steer: the queued message starts the next turn anyway.
        if (!turnActive) return true;
        if (state.acceptsTurnControl !== true) return false;
        await context.deleteMessage(persistence.queuedUserMessages, messageId);
        await steer(context, environment, queued.message);
        return true;
      },
    }),
    /** Deletes a queued message; `false` for one no longer queued. */
    deleteQueuedMessage: rpc<DeleteQueuedMessageInput, boolean>({
      name: "delete_queued_message",
      parseInput: parseDeleteQueuedMessage,
      handler: async (context, input) => {
        requireRunningSession(context, "delete_queued_message");
        if ((await findQueued(context, environment, input.messageId)) === undefined) return false;
        await context.deleteMessage(persistence.queuedUserMessages, input.messageId);
        return true;
      },
    }),
    /**
     * Stops the active turn: records `TurnCancellationRequest`, cancels the
     * model call and the task polls, wakes every approval, question and
     * durable wait, and moves to `FinishTurnCancellation`. `false` when no
     * turn is active, `turnId` names another turn, or the turn does not
     * accept turn control; `true`, changing nothing, for a turn already
     * cancelled. May throw `RpcLockConflictError`, which is safe to retry
     * (`invokeRPC`'s `lockConflictRetryMs`).
     */
    cancelTurn: rpc<CancelTurnInput | undefined, boolean>({
      name: "cancel_turn",
      parseInput: parseCancelTurn,
      locks: [persistence.turnCancellationRequest, persistence.pendingInterrupts],
      handler: async (context, input) => {
        requireRunningSession(context, "cancel_turn");
        const state = await context.read(persistence.agentState);
        const turnId = state?.activeTurnId ?? null;
        if (state === undefined || turnId === null) return false;
        if ((input?.turnId ?? null) !== null && input?.turnId !== turnId) return false;
        if (state.acceptsTurnControl !== true) return false;
        if ((await context.read(persistence.turnCancellationRequest))?.turnId === turnId) return true;
        await context.write(persistence.turnCancellationRequest, { turnId, requestedAt: isoNow(context) });
        const pending = (await context.read(persistence.pendingInterrupts)) ?? [];
        await context.write(persistence.pendingInterrupts, pending.filter((interrupt) => interrupt.turnId !== turnId));
        for (const key of await context.keys(persistence.agentToolCalls)) {
          const record = await context.read(persistence.agentToolCalls.instance(key));
          if (record === undefined || record.turnId !== turnId) continue;
          if (record.status === "awaiting_approval" || record.status === "awaiting_answer" || record.status === "waiting_for_timer") {
            await context.publish(persistence.toolCallCancellations.instance(record.toolCallId), { reason: "turn_cancelled" });
          }
        }
        // Whether this commit cancels the Step that drives the turn (its model call, or the record of a failed one):
        // then FinishTurnCancellation ends the turn; otherwise ResumeTurn or ApplyTurnControl still will.
        const drivers: readonly string[] = [AgentStepType.RunModel, AgentStepType.CompactContext, AgentStepType.RecordTurnFailure];
        const modelCallCancelled = (await context.activeExecutions()).some((execution) => drivers.includes(execution.stepType));
        context.cancelSteps([AgentStepType.RunModel, AgentStepType.CompactContext, AgentStepType.RecordTurnFailure, AgentStepType.PollToolTask]);
        context.moveTo(AgentStepType.FinishTurnCancellation, { turn_id: turnId, model_call_cancelled: modelCallCancelled });
        return true;
      },
    }),
  };
}
