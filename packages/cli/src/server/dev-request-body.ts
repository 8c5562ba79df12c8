/**
 * Reading and checking the JSON bodies of the dev server's routes. Bodies are
 * untrusted: every refusal is an `InvalidInputError` (a 400) that names the
 * bad value, shortened.
 */
import { describeValue, InvalidInputError } from "@perdure/engine";
import type { Context, MiddlewareHandler } from "hono";

/** Letters, digits and `._:-`, 1 to 128 characters, starting with a letter or digit. */
const sessionIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A session ID from a path or a body, checked. */
export function checkSessionId(value: unknown): string {
  if (typeof value !== "string" || !sessionIdPattern.test(value)) {
    throw new InvalidInputError(`session ID ${describeValue(value)} is invalid: use 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit`);
  }
  return value;
}

/** The body as a JSON object; the size limit was enforced while it was read. */
export async function readJsonObject(context: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse(await context.req.text());
  } catch {
    throw new InvalidInputError("request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidInputError(`request body ${describeValue(body)} is invalid: send a JSON object`);
  }
  return body as Record<string, unknown>;
}

/** The last message of a `useChat` request: a user message to send (in plan mode or not), or an assistant message with approval decisions and question answers. */
export type ChatRequestMessage =
  | { role: "user"; text: string; planMode: boolean; messageId: unknown }
  | { role: "assistant"; message: Record<string, unknown> };

/** The session and the last message of a `POST /api/chat` body. */
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
  if (message.role === "assistant") return { sessionId, message: { role: "assistant", message } };
  if (message.role !== "user") {
    throw new InvalidInputError(`the last message's role ${describeValue(message.role)} is invalid: send a "user" message, or an "assistant" message with approval decisions`);
  }
  const text = (parts as Record<string, unknown>[]).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("");
  const planMode = body.planMode ?? false;
  if (typeof planMode !== "boolean") throw new InvalidInputError(`planMode ${describeValue(planMode)} is invalid: use true or false`);
  // The client's ID of the message; sendAgentUserMessageWithUIMessageStream checks it.
  return { sessionId, message: { role: "user", text, planMode, messageId: message.id } };
}

/** The `revision` of a `POST /api/sessions/:id/plan/execute` body: the plan revision the person approved. */
export function readPlanRevision(body: Record<string, unknown>): number {
  const { revision } = body;
  if (typeof revision !== "number" || !Number.isSafeInteger(revision) || revision < 1) {
    throw new InvalidInputError(`revision ${describeValue(revision)} is invalid: send the plan's revision, a positive integer`);
  }
  return revision;
}

/** An interrupt ID from a path: 1 to 512 characters. */
export function checkInterruptId(value: unknown): string {
  if (typeof value !== "string" || value === "" || value.length > 512) {
    throw new InvalidInputError(`interrupt ID ${describeValue(value)} is invalid: use the question's interrupt ID`);
  }
  return value;
}

/** The body of `POST /api/sessions/:id/questions/:interruptId`: `{ answer }`, or `{ declined: true, reason? }`. */
export function readQuestionResponse(body: Record<string, unknown>): { answer: string | null; reason?: string } {
  if (typeof body.answer === "string") return { answer: body.answer };
  if (body.declined !== true) {
    throw new InvalidInputError(`question response ${describeValue(body)} is invalid: send { "answer": "<text>" } or { "declined": true, "reason"?: "<text>" }`);
  }
  if (body.reason !== undefined && typeof body.reason !== "string") throw new InvalidInputError(`reason ${describeValue(body.reason)} is invalid: send text, or leave it out`);
  return { answer: null, ...(typeof body.reason === "string" ? { reason: body.reason } : {}) };
}

/** Refuses a path whose percent-encoding does not decode (400), before any route or file lookup. */
export const rejectMalformedPath: MiddlewareHandler = async (context, next) => {
  const { pathname } = new URL(context.req.url);
  try {
    decodeURIComponent(pathname);
  } catch {
    return context.json({ error: `path ${describeValue(pathname)} has a malformed percent-encoding` }, 400);
  }
  return next();
};
