/**
 * The bypasses of issue 32's table, each tried on a user-written agent
 * served by a running `perdure dev`, through its HTTP API as `useChat`
 * would: the approval must be asked on the UI stream (or the call must run
 * without one when the user's own approval function says so), a write's
 * thrown message must reach the UI and the next model request, a flaky read
 * must be retried, and an entry with a refused option must not start.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { approvalRequests, approveOnStream, chat, devServerRefusal, streamedText, type UiChunk } from "./dev-server-driver.ts";

/** Where a row's session runs and how to see its effects and what its model was sent. */
export interface RowContext {
  origin: string;
  sessionId: string;
  framework: string;
  effectsFile: string;
  /** Every tool result the framework's provider fake was sent so far. */
  toolOutputsSentToModel(): string[];
}

export function effectLines(effectsFile: string): string[] {
  return existsSync(effectsFile) ? readFileSync(effectsFile, "utf8").split("\n").filter((line) => line !== "") : [];
}

function countOf(context: RowContext, line: string): number {
  return effectLines(context.effectsFile).filter((entry) => entry === line).length;
}

async function askedOnStream(context: RowContext, messageId: string, text: string, toolName: string): Promise<ReturnType<typeof approvalRequests>[number]> {
  const chunks = await chat(context.origin, context.sessionId, messageId, text);
  const requests = approvalRequests(chunks);
  assert.equal(requests.length, 1, `${context.framework}: "${text}" asks for one approval on the UI stream: ${JSON.stringify(chunks.map((chunk) => chunk.type))}`);
  assert.equal(requests[0]?.toolName, toolName, context.framework);
  return requests[0]!;
}

function finished(chunks: readonly UiChunk[], context: RowContext, what: string): void {
  assert.ok(chunks.some((chunk) => chunk.type === "finish"), `${context.framework}: ${what} ends its UI stream with finish: ${JSON.stringify(chunks.map((chunk) => chunk.type))}`);
}

/** Rows 3 and 4 (and the OpenAI Agents SDK's own `needsApproval` function): the user's per-call approval function asks for order 1001 and not for 1002. */
export async function checkPerCallApproval(context: RowContext): Promise<void> {
  const request = await askedOnStream(context, "cancel-1001", "Cancel order 1001.", "cancel_order");
  assert.equal(countOf(context, `${context.framework} cancel 1001`), 0, `${context.framework} cancelled before the approval`);
  const rest = await approveOnStream(context.origin, context.sessionId, request);
  finished(rest, context, "the approved cancel");
  assert.match(streamedText(rest), /Done: cancelled order 1001/, context.framework);
  assert.equal(countOf(context, `${context.framework} cancel 1001`), 1);

  const chunks = await chat(context.origin, context.sessionId, "cancel-1002", "Cancel order 1002.");
  assert.deepEqual(approvalRequests(chunks), [], `${context.framework}: the approval function said no approval for order 1002`);
  finished(chunks, context, "the cancel of order 1002");
  assert.match(streamedText(chunks), /Done: cancelled order 1002/, context.framework);
  assert.equal(countOf(context, `${context.framework} cancel 1002`), 1);
}

/** Row 5: the framework's approval flag on a tool whose session policy names only an effect (`idempotent_write`, which alone asks for none): the stricter wins. */
export async function checkEffectOnlyPolicyKeepsApproval(context: RowContext): Promise<void> {
  const request = await askedOnStream(context, "reset-15", "Reset the password of order 15.", "reset_password");
  assert.equal(countOf(context, `${context.framework} reset 15`), 0, `${context.framework} reset before the approval`);
  const rest = await approveOnStream(context.origin, context.sessionId, request);
  finished(rest, context, "the approved reset");
  assert.match(streamedText(rest), /Done: reset the password of order 15/, context.framework);
  assert.equal(countOf(context, `${context.framework} reset 15`), 1);
}

/**
 * Row 6 (and row 7's write): an approved single-attempt write whose tool
 * throws. Its message (`expected`) reaches the UI stream as the call's
 * error and the next model request as the tool's result, in words that do
 * not claim an interruption; it ran once.
 */
export async function checkThrowingWrite(context: RowContext, orderId: string, expected: RegExp): Promise<void> {
  const request = await askedOnStream(context, `charge-${orderId}`, `Charge order ${orderId}.`, "charge_order");
  const rest = await approveOnStream(context.origin, context.sessionId, request);
  finished(rest, context, "the approved charge");
  const error = rest.find((chunk) => chunk.type === "tool-output-error" && chunk.toolCallId === request.toolCallId);
  assert.ok(error !== undefined, `${context.framework}: the charge's error is on the UI stream: ${JSON.stringify(rest)}`);
  assert.match(String(error.errorText), expected, context.framework);
  assert.doesNotMatch(String(error.errorText), /interrupted/, context.framework);
  const sent = context.toolOutputsSentToModel().filter((output) => output.includes("The tool call failed with an error") && expected.test(output));
  assert.ok(sent.length > 0, `${context.framework}: the next model request carries the error: ${JSON.stringify(context.toolOutputsSentToModel())}`);
  assert.ok(sent.every((output) => !/interrupted/.test(output)), context.framework);
  assert.match(streamedText(rest), expected, `${context.framework}: the model answered from the error it was sent`);
  assert.equal(countOf(context, `${context.framework} charge ${orderId}`), 1, `${context.framework}: a single-attempt write that throws runs once`);
}

/** Row 7's read: an OpenAI Agents SDK tool with the default errorFunction that throws once is retried, so the answer comes from its second attempt. */
export async function checkThrowingReadRetried(context: RowContext): Promise<void> {
  const chunks = await chat(context.origin, context.sessionId, "stock-1003", "Check the stock of order 1003.");
  assert.deepEqual(approvalRequests(chunks), [], context.framework);
  finished(chunks, context, "the stock check");
  assert.match(streamedText(chunks), /Done: 3 of order 1003 in stock/, `${context.framework}: the read was retried, not answered with the SDK's stock error text`);
  assert.equal(countOf(context, `${context.framework} stock 1003`), 2, `${context.framework}: one failed attempt, one retry`);
}

const refusedEntries = fileURLToPath(new URL("./refused/", import.meta.url));

/** Rows 1, 2 and 9: `perdure dev` on an entry whose agent sets a refused option exits at start, naming the option. */
export async function checkRefusedAtStart(folder: string, env: Record<string, string>, entryFile: string, option: RegExp): Promise<void> {
  const [port] = await findFreeLoopbackPorts(1);
  assert.ok(port !== undefined);
  const { exitCode, output } = await devServerRefusal(port, join(folder, `${entryFile}.db`), env, join(refusedEntries, entryFile));
  assert.notEqual(exitCode, "started", `perdure dev served ${entryFile}:\n${output}`);
  assert.notEqual(exitCode, 0, output);
  assert.match(output, option, `perdure dev's refusal of ${entryFile} names the option`);
}
