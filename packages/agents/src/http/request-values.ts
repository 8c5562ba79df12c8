/**
 * Reading and checking the values of the session routes: path segments and
 * JSON bodies. Both are untrusted: every refusal is an `InvalidInputError`
 * (a 400) that names the bad value, shortened.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";

/** Letters, digits and `._:-`, 1 to 128 characters, starting with a letter or digit. */
const sessionIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** The ID the UI message stream gives a turn's assistant message. */
const turnAssistantMessageIdPattern = /^turn-[1-9][0-9]{0,15}-assistant$/;

/** A session ID from a path or a body, checked. */
export function checkSessionId(value: unknown): string {
  if (typeof value !== "string" || !sessionIdPattern.test(value)) {
    throw new InvalidInputError(`session ID ${describeValue(value)} is invalid: use 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit`);
  }
  return value;
}

/** An interrupt ID from a path: 1 to 512 characters. */
export function checkInterruptId(value: unknown): string {
  if (typeof value !== "string" || value === "" || value.length > 512) {
    throw new InvalidInputError(`interrupt ID ${describeValue(value)} is invalid: use the interrupt_id of a pending approval or question`);
  }
  return value;
}

/** The last message of a `useChat` request: a user message to send (in plan mode or not), or an assistant message with approval decisions and question answers. */
export type ChatRequestMessage =
  | { role: "user"; text: string; planMode: boolean; messageId: string | undefined }
  | { role: "assistant"; message: Record<string, unknown> };

/**
 * The session and the last message of a `POST /chat` body. An assistant
 * message carries decisions for the turn its ID names, so it must keep the
 * ID the stream gave it, `turn-<n>-assistant`.
 */
export function readChatRequest(body: Record<string, unknown>): { sessionId: string; message: ChatRequestMessage } {
  const sessionId = checkSessionId(body.id);
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new InvalidInputError(`messages ${describeValue(messages)} is invalid: send a non-empty array of UI messages`);
  }
  const last: unknown = messages.at(-1);
  if (typeof last !== "object" || last === null || Array.isArray(last)) {
    throw new InvalidInputError(`the last message ${describeValue(last)} is invalid: send a UI message object`);
  }
  const message = last as Record<string, unknown>;
  const { parts } = message;
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === "object" && part !== null && !Array.isArray(part))) {
    throw new InvalidInputError(`the last message's parts ${describeValue(parts)} are invalid: send an array of part objects`);
  }
  if (message.role === "assistant") {
    if (typeof message.id !== "string" || !turnAssistantMessageIdPattern.test(message.id)) {
      throw new InvalidInputError(`the last message's id ${describeValue(message.id)} is invalid: an assistant message with decisions must keep the ID the stream gave it, turn-<n>-assistant (keep useChat's message IDs, or use POST …/sessions/:id/approvals/:interruptId)`);
    }
    return { sessionId, message: { role: "assistant", message } };
  }
  if (message.role !== "user") {
    throw new InvalidInputError(`the last message's role ${describeValue(message.role)} is invalid: send a "user" message, or an "assistant" message with approval decisions`);
  }
  const text = (parts as Record<string, unknown>[]).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("");
  const planMode = body.planMode ?? false;
  if (typeof planMode !== "boolean") throw new InvalidInputError(`planMode ${describeValue(planMode)} is invalid: use true or false`);
  // The client's ID of the message, which the session keeps; sendAgentUserMessageWithUIMessageStream checks it.
  if (message.id !== undefined && message.id !== null && typeof message.id !== "string") {
    throw new InvalidInputError(`the last message's id ${describeValue(message.id)} is invalid: send the client's message ID as a string`);
  }
  const messageId = typeof message.id === "string" ? message.id : undefined;
  return { sessionId, message: { role: "user", text, planMode, messageId } };
}

/** The `revision` of a `POST /sessions/:id/plan/execute` body: the plan revision the person approved. */
export function readPlanRevision(body: Record<string, unknown>): number {
  const { revision } = body;
  if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision < 1) {
    throw new InvalidInputError(`revision ${describeValue(revision)} is invalid: send the plan's revision, a positive integer`);
  }
  return revision;
}

/** The body of `POST /sessions/:id/questions/:interruptId`: `{ answer }`, or `{ declined: true, reason? }`. */
export function readQuestionResponse(body: Record<string, unknown>): { answer: string | null; reason?: string } {
  if (typeof body.answer === "string") return { answer: body.answer };
  if (body.declined !== true) {
    throw new InvalidInputError(`question response ${describeValue(body)} is invalid: send { "answer": "<text>" } or { "declined": true, "reason"?: "<text>" }`);
  }
  if (body.reason !== undefined && typeof body.reason !== "string") throw new InvalidInputError(`reason ${describeValue(body.reason)} is invalid: send text, or leave it out`);
  return { answer: null, ...(typeof body.reason === "string" ? { reason: body.reason } : {}) };
}

/** The body of `POST /sessions/:id/approvals/:interruptId`: `{ approved, reason? }`. */
export function readApprovalDecision(body: Record<string, unknown>): { approved: boolean; reason?: string } {
  if (typeof body.approved !== "boolean") {
    throw new InvalidInputError(`approved ${describeValue(body.approved)} is invalid: send { "approved": true } or { "approved": false, "reason"?: "<text the model sees>" }`);
  }
  if (body.reason !== undefined && body.reason !== null && typeof body.reason !== "string") {
    throw new InvalidInputError(`reason ${describeValue(body.reason)} is invalid: send text, or leave it out`);
  }
  return { approved: body.approved, ...(typeof body.reason === "string" ? { reason: body.reason } : {}) };
}
