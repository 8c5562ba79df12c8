/**
 * Turn control over HTTP: steering the running turn with a queued
 * message or new text (`steer_user_message`), deleting a queued message
 * (`delete_queued_message`), stopping the running turn (`cancel_turn`) and
 * approving a plan (`execute_plan`).
 * Bodies are untrusted: every refusal is an `InvalidInputError` (a 400)
 * that names the bad value.
 */
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import { describeValue, InvalidInputError, type Client } from "@perdure/engine";
import { personLockConflictRetryMs } from "../session/rpcs/person-lock-conflict-retry.ts";

/** The longest Channel message ID accepted; the engine's are far shorter. */
const maxMessageIdLength = 200;
/** The longest turn ID accepted (`turn-<n>`). */
const maxTurnIdLength = 64;

/** What `POST /sessions/:id/steer` steers the running turn with: a queued message, or new text. */
export type SteerRequest = { messageId: string } | { text: string; planMode: boolean };

function checkMessageId(value: unknown): string {
  if (typeof value !== "string" || value === "" || value.length > maxMessageIdLength) {
    throw new InvalidInputError(`messageId ${describeValue(value)} is invalid: send the message_id of a queued message from the session's snapshot`);
  }
  return value;
}

/** The body of `POST /sessions/:id/steer`: `{ messageId }` or `{ text, planMode? }`, exactly one of the two. */
export function readSteerRequest(body: Record<string, unknown>): SteerRequest {
  const hasMessageId = body.messageId !== undefined && body.messageId !== null;
  const hasText = body.text !== undefined && body.text !== null;
  if (hasMessageId === hasText) {
    throw new InvalidInputError(`steer request ${describeValue(body)} is invalid: send exactly one of { "messageId": "<queued message ID>" } and { "text": "<text>", "planMode"?: false }`);
  }
  if (hasMessageId) return { messageId: checkMessageId(body.messageId) };
  if (typeof body.text !== "string") throw new InvalidInputError(`text ${describeValue(body.text)} is invalid: send the message text`);
  const planMode = body.planMode ?? false;
  if (typeof planMode !== "boolean") throw new InvalidInputError(`planMode ${describeValue(planMode)} is invalid: use true or false`);
  return { text: body.text, planMode };
}

/** The body of `POST /sessions/:id/queue/delete`: `{ messageId }`. */
export function readDeleteQueuedRequest(body: Record<string, unknown>): { messageId: string } {
  return { messageId: checkMessageId(body.messageId) };
}

/** The body of `POST /sessions/:id/cancel`: `{ turnId? }`, where absent or null means the active turn. */
export function readCancelRequest(body: Record<string, unknown>): { turnId: string | null } {
  const turnId = body.turnId ?? null;
  if (turnId !== null && (typeof turnId !== "string" || !/^turn-[1-9][0-9]*$/.test(turnId) || turnId.length > maxTurnIdLength)) {
    throw new InvalidInputError(`turnId ${describeValue(turnId)} is invalid: send the active turn's ID, such as "turn-3", or null for whichever turn is active`);
  }
  return { turnId };
}

/**
 * Steers the running turn; true when the session took it. With `text` and
 * no active turn, the session queues the text instead (it starts the next
 * turn at once). False for a message no longer queued, blank text, or a
 * turn that does not accept steering. A message the session consumed while
 * the call ran fails with `ChannelMessageNotFoundError` (a 409): read the
 * snapshot again.
 */
export async function steerTurn(client: Client, flow: AgentSessionFlow, sessionId: string, request: SteerRequest): Promise<boolean> {
  const input = "messageId" in request
    ? { messageId: request.messageId, text: null }
    : { messageId: null, text: request.text, ...(request.planMode ? { planMode: true } : {}) };
  return client.invokeRPC(flow.steerUserMessage, sessionId, input);
}

/** Deletes a queued message; false when it is no longer queued. */
export async function deleteQueuedMessage(client: Client, flow: AgentSessionFlow, sessionId: string, messageId: string): Promise<boolean> {
  return client.invokeRPC(flow.deleteQueuedMessage, sessionId, { messageId });
}

/**
 * Stops the active turn (or `turnId`, when it is the active one) with
 * `cancel_turn`, retried while a short Step holds its locks. True when the
 * request is recorded (also for a turn already cancelled); false when no
 * turn is active, another turn is, or the turn does not accept cancellation.
 */
export async function cancelTurnWithRetry(client: Client, flow: AgentSessionFlow, sessionId: string, turnId: string | null): Promise<boolean> {
  return client.invokeRPC(flow.cancelTurn, sessionId, { turnId }, { lockConflictRetryMs: personLockConflictRetryMs });
}

/**
 * Approves plan revision `revision` with `execute_plan`; true when the
 * session took it and will start the executing turn. A lock conflict means a
 * Step or a concurrent call holds `PendingPlanExecution`; the call is made
 * again for up to `personLockConflictRetryMs`, and answers false when the
 * other call took the approval.
 */
export async function executePlanWithRetry(client: Client, flow: AgentSessionFlow, sessionId: string, revision: number): Promise<boolean> {
  return client.invokeRPC(flow.executePlan, sessionId, { revision }, { lockConflictRetryMs: personLockConflictRetryMs });
}
