/**
 * What the user-agents tests share: the scripted model both provider fakes
 * follow, a real `perdure dev` child process, and its HTTP API driven as a
 * browser's `useChat` drives it (a message's UI stream, an approval sent
 * back on the stream's assistant message, `/inspect`).
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pollUntil } from "@perdure/agents/testing";
import type { ScriptedReply } from "./loopback-openai-responses.ts";

export const repositoryRoot = resolve(fileURLToPath(new URL("../../../../..", import.meta.url)));
const cliPath = join(repositoryRoot, "packages/cli/src/cli.ts");
export const entryPath = fileURLToPath(new URL("./entry.ts", import.meta.url));
// The Claude Code harness takes tens of seconds per run on a loaded two-core machine; nothing here asserts time.
export const waitMs = 240_000;

/** The user agents of `entry.ts`, by Flow type, with the name their effects are logged under. */
export const userAgents = [
  { flowType: "UserAiSdkAgent", framework: "ai-sdk" },
  { flowType: "UserOpenAiAgentsAgent", framework: "openai-agents" },
  { flowType: "UserMastraAgent", framework: "mastra" },
  { flowType: "UserClaudeAgent", framework: "claude" },
] as const;

const toolOfRequest: readonly [RegExp, string][] = [
  [/where is order (\d+)/i, "lookup_order"],
  [/refund order (\d+)/i, "refund_order"],
  [/cancel order (\d+)/i, "cancel_order"],
  [/reset the password of order (\d+)/i, "reset_password"],
  [/charge order (\d+)/i, "charge_order"],
  [/stock of order (\d+)/i, "check_stock"],
];

/** The scripted model both fakes follow: the tool the user's message asks for, then an answer quoting the tool results. */
export function script(lastUserText: string, toolOutputs: string[]): ScriptedReply {
  if (toolOutputs.length === 0) {
    for (const [pattern, name] of toolOfRequest) {
      const orderId = pattern.exec(lastUserText)?.[1];
      if (orderId !== undefined) return { toolCall: { name, arguments: { order_id: orderId } } };
    }
  }
  return { text: `Done: ${toolOutputs.join("; ")}` };
}

export interface DevServer {
  origin: string;
  child: ChildProcess;
  log(): string;
}

function spawnDevServer(port: number, databasePath: string, env: Record<string, string>, entry: string): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [cliPath, "dev", "--port", String(port), "--db", databasePath, entry], {
    cwd: repositoryRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PERDURE_DATABASE_URL: "", PERDURE_DEV_TOKEN: "", OTEL_EXPORTER_OTLP_ENDPOINT: "", ...env },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Starts `perdure dev` on `entry` and waits for its URL. */
export async function startDevServer(port: number, databasePath: string, env: Record<string, string>, entry: string = entryPath): Promise<DevServer> {
  const { child, output } = spawnDevServer(port, databasePath, env, entry);
  await new Promise<void>((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`perdure dev printed no URL within 120 s:\n${output()}`)), 120_000);
    const read = (): void => {
      if (/web UI and API at /.test(output())) {
        clearTimeout(timer);
        resolveStart();
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`perdure dev exited:\n${output()}`));
    });
  });
  return { origin: `http://127.0.0.1:${port}`, child, log: output };
}

/** Starts `perdure dev` on an entry it must refuse; returns its exit code and everything it printed, or `started` when it served the entry after all (then it is killed). */
export async function devServerRefusal(port: number, databasePath: string, env: Record<string, string>, entry: string): Promise<{ exitCode: number | null | "started"; output: string }> {
  const { child, output } = spawnDevServer(port, databasePath, env, entry);
  const exitCode = await new Promise<number | null | "started">((resolveExit, reject) => {
    const timer = setTimeout(() => {
      process.kill(-(child.pid ?? 0), "SIGKILL");
      reject(new Error(`perdure dev neither started nor exited within 120 s:\n${output()}`));
    }, 120_000);
    const read = (): void => {
      if (!/web UI and API at /.test(output())) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      child.once("exit", () => resolveExit("started"));
      process.kill(-(child.pid ?? 0), "SIGKILL");
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolveExit(code);
    });
  });
  return { exitCode, output: output() };
}

/** SIGKILLs perdure dev and everything it started (the Claude Code harness), as when the machine dies. */
export async function killGroup(server: DevServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => server.child.once("exit", () => resolveExit()));
  try {
    process.kill(-(server.child.pid ?? 0), "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await exited;
}

export async function call(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}${path}`, { method, ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
  return { status: response.status, text: await response.text() };
}

export interface InspectedSession {
  state: { turn_count: number; active_turn_id: string | null; last_turn_error: string | null } | null;
  messages: { role: string; text: string; tool_name?: string }[];
  pending_interrupts: { interrupt_id: string; tool_name: string }[];
}

export async function inspect(origin: string, sessionId: string): Promise<InspectedSession> {
  const answer = await call(origin, "GET", `/api/sessions/${sessionId}/inspect`);
  assert.equal(answer.status, 200, answer.text);
  return (JSON.parse(answer.text) as { snapshot: InspectedSession }).snapshot;
}

export async function turnEnded(origin: string, sessionId: string, turns: number): Promise<InspectedSession> {
  return pollUntil(async () => {
    const snapshot = await inspect(origin, sessionId);
    return snapshot.state !== null && snapshot.state.turn_count >= turns && snapshot.state.active_turn_id === null ? snapshot : undefined;
  }, { timeoutMs: waitMs, intervalMs: 250, description: `${sessionId} to end turn ${turns}` });
}

export async function createSession(origin: string, sessionId: string, flowType: string): Promise<void> {
  const created = await call(origin, "POST", "/api/sessions", { sessionId, agent: flowType });
  assert.equal(created.status, 201, created.text);
}

/** One chunk of a UI message stream. */
export type UiChunk = Record<string, unknown> & { type: string };

function chunksOf(streamText: string): UiChunk[] {
  return streamText.split("\n").filter((line) => line.startsWith("data: ") && line !== "data: [DONE]").map((line) => JSON.parse(line.slice("data: ".length)) as UiChunk);
}

/** Sends a user message as `useChat` does and reads the UI message stream to its end (the turn's end, or its approval request). */
export async function chat(origin: string, sessionId: string, messageId: string, text: string): Promise<UiChunk[]> {
  const answer = await call(origin, "POST", "/api/chat", { id: sessionId, messages: [{ id: messageId, role: "user", parts: [{ type: "text", text }] }] });
  assert.equal(answer.status, 200, answer.text);
  return chunksOf(answer.text);
}

/** The approval requests of a UI stream, with the assistant message they belong to. */
export function approvalRequests(chunks: readonly UiChunk[]): { messageId: string; approvalId: string; toolCallId: string; toolName: string }[] {
  const messageId = chunks.findLast((chunk) => chunk.type === "start" && typeof chunk.messageId === "string")?.messageId as string | undefined;
  const toolNames = new Map(chunks.filter((chunk) => chunk.type === "tool-input-available").map((chunk) => [chunk.toolCallId as string, chunk.toolName as string]));
  return chunks.filter((chunk) => chunk.type === "tool-approval-request").map((chunk) => ({
    messageId: messageId ?? "",
    approvalId: chunk.approvalId as string,
    toolCallId: chunk.toolCallId as string,
    toolName: toolNames.get(chunk.toolCallId as string) ?? "",
  }));
}

/** Approves as `useChat` does after `addToolApprovalResponse`: the assistant message, its tool part answered; returns the rest of the turn's stream. */
export async function approveOnStream(origin: string, sessionId: string, request: { messageId: string; approvalId: string; toolCallId: string; toolName: string }): Promise<UiChunk[]> {
  const message = {
    id: request.messageId,
    role: "assistant",
    parts: [{ type: "dynamic-tool", toolName: request.toolName, toolCallId: request.toolCallId, state: "approval-responded", input: {}, approval: { id: request.approvalId, approved: true } }],
  };
  const answer = await call(origin, "POST", "/api/chat", { id: sessionId, messages: [message] });
  assert.equal(answer.status, 200, answer.text);
  return chunksOf(answer.text);
}

/** The text the model wrote in a UI stream. */
export function streamedText(chunks: readonly UiChunk[]): string {
  return chunks.filter((chunk) => chunk.type === "text-delta").map((chunk) => String(chunk.delta)).join("");
}
