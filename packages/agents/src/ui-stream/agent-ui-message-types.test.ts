/**
 * The structural types stay assignable to the AI SDK's, every part and
 * message the package builds passes the AI SDK's own validation, and the
 * entry never loads `ai` at runtime.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseJsonEventStream, uiMessageChunkSchema, validateUIMessages, type FinishReason, type UIMessage, type UIMessageChunk } from "ai";
import type { AgentUIFinishReason, AgentUIMessage, AgentUIMessageChunk, AgentUIMessagePart } from "./agent-ui-message-types.ts";

type IsAssignable<TFrom, TTo> = [TFrom] extends [TTo] ? true : false;

// Compile-time checks: `tsc -b` fails when a type drifts from the AI SDK's.
const chunkIsUIMessageChunk: IsAssignable<AgentUIMessageChunk, UIMessageChunk> = true;
const messageIsUIMessage: IsAssignable<AgentUIMessage, UIMessage> = true;
const partIsUIMessagePart: IsAssignable<AgentUIMessagePart, UIMessage["parts"][number]> = true;
const finishReasonIsFinishReason: IsAssignable<AgentUIFinishReason, FinishReason> = true;

const everyChunk: AgentUIMessageChunk[] = [
  { type: "start", messageId: "turn-1-assistant" },
  { type: "start-step" },
  { type: "text-start", id: "text-0" },
  { type: "text-delta", id: "text-0", delta: "Hi" },
  { type: "text-end", id: "text-0" },
  { type: "reasoning-start", id: "reasoning-1" },
  { type: "reasoning-delta", id: "reasoning-1", delta: "Hm" },
  { type: "reasoning-end", id: "reasoning-1" },
  { type: "tool-input-available", toolCallId: "c1", toolName: "refund", input: { order_id: "7" }, dynamic: true },
  { type: "tool-approval-request", approvalId: "c1-approval", toolCallId: "c1" },
  { type: "tool-approval-response", approvalId: "c1-approval", approved: false, reason: "no" },
  { type: "tool-output-denied", toolCallId: "c1" },
  { type: "tool-output-available", toolCallId: "c1", output: "done", dynamic: true },
  { type: "tool-output-error", toolCallId: "c1", errorText: "failed", dynamic: true },
  { type: "data-agent-event", data: { type: "usage_recorded", turn_id: "turn-1", attempt: 1, step_execution_id: "4", payload: "{}" }, transient: true },
  { type: "data-agent-resume-token", data: "u1.x.y", transient: true },
  { type: "data-agent-question", id: "c7", data: { interruptId: "c7", toolCallId: "c7", toolName: "ask_user", question: "Which size?", choices: ["S"], allowsFreeText: true, deadline: null } },
  { type: "data-agent-question-resolution", id: "c7", data: { interruptId: "c7", toolCallId: "c7", resolution: "answered", rejectionMessage: null, cancellationReason: null } },
  { type: "data-agent-timer", id: "c8", data: { toolCallId: "c8", waitUntil: "2026-12-04T10:00:00.000Z", reason: "overnight" } },
  { type: "data-agent-plan", id: "agent-plan", data: { revision: 2, status: "draft", taskCount: 1, tasks: [{ content: "Check stock", status: "pending" }] } },
  { type: "data-agent-mcp-tool-progress", id: "c9", data: { toolCallId: "c9", toolName: "notes__list_notes", server: "notes", progress: 1, attempt: 1, total: 2, message: "read returns" } },
  { type: "data-agent-mcp-task-status", id: "c10", data: { toolCallId: "c10", toolName: "notes__index_notes", server: "notes", taskId: "t-1", status: "working", statusMessage: null } },
  { type: "reset-step" },
  { type: "finish-step" },
  { type: "error", errorText: "boom" },
  { type: "finish", finishReason: "tool-calls" },
];

const sourceDirectory = fileURLToPath(new URL(".", import.meta.url));

describe("AI SDK compatibility", () => {
  it("types are assignable to the AI SDK's UIMessageChunk and UIMessage", () => {
    assert.deepEqual([chunkIsUIMessageChunk, messageIsUIMessage, partIsUIMessagePart, finishReasonIsFinishReason], [true, true, true, true]);
  });

  it("every part type passes the AI SDK's chunk schema on the wire", async () => {
    const text = everyChunk.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("");
    const stream = parseJsonEventStream({ stream: new Response(text).body ?? new ReadableStream(), schema: uiMessageChunkSchema });
    const parsed: UIMessageChunk[] = [];
    for await (const result of stream) {
      assert.ok(result.success, result.success ? "" : String(result.error));
      parsed.push(result.value);
    }
    assert.deepEqual(parsed, everyChunk);
  });

  it("messages with every part state pass the AI SDK's message validation", async () => {
    const message: AgentUIMessage = {
      id: "turn-1-assistant",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "Hm", state: "done" },
        { type: "text", text: "Hi", state: "done" },
        { type: "dynamic-tool", toolCallId: "c1", toolName: "t", state: "input-available", input: {} },
        { type: "dynamic-tool", toolCallId: "c2", toolName: "t", state: "approval-requested", input: {}, approval: { id: "c2-approval" } },
        { type: "dynamic-tool", toolCallId: "c3", toolName: "t", state: "approval-responded", input: {}, approval: { id: "c3-approval", approved: true } },
        { type: "dynamic-tool", toolCallId: "c4", toolName: "t", state: "output-available", input: {}, output: "x", approval: { id: "c4-approval", approved: true } },
        { type: "dynamic-tool", toolCallId: "c5", toolName: "t", state: "output-error", input: {}, errorText: "x" },
        { type: "dynamic-tool", toolCallId: "c6", toolName: "t", state: "output-denied", input: {}, approval: { id: "c6-approval", approved: false, reason: "no" } },
        { type: "dynamic-tool", toolCallId: "c7", toolName: "ask_user", state: "input-available", input: { question: "Which size?" } },
        { type: "data-agent-question", id: "c7", data: { interruptId: "c7", toolCallId: "c7", toolName: "ask_user", question: "Which size?", choices: [], allowsFreeText: true, deadline: null, response: { answer: "M" } } },
        { type: "data-agent-question-resolution", id: "c7", data: { interruptId: "c7", toolCallId: "c7", resolution: "declined", rejectionMessage: "later", cancellationReason: null } },
        { type: "data-agent-timer", id: "c8", data: { toolCallId: "c8", waitUntil: "2026-12-04T10:00:00.000Z", reason: "overnight" } },
        { type: "data-agent-plan", id: "agent-plan", data: { revision: 2, status: "active", taskCount: 0, tasks: null } },
      ],
    };
    const messages: UIMessage[] = [{ id: "message-1", role: "user", parts: [{ type: "text", text: "go" }] }, message];
    assert.deepEqual(await validateUIMessages({ messages }), messages);
  });

  it("the ui-stream sources never import ai, and the entry lists its exports by name", () => {
    const sources = readdirSync(sourceDirectory).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    assert.ok(sources.includes("index.ts"));
    for (const name of sources) {
      const text = readFileSync(join(sourceDirectory, name), "utf8");
      // Import lines only: TSDoc examples may show the AI SDK.
      assert.ok(!/^(import|export)\b[^\n]*from\s+["'](ai|@ai-sdk\/[^"']+)["']/m.test(text), `${name} imports the AI SDK`);
    }
    assert.ok(!/^export \*/m.test(readFileSync(join(sourceDirectory, "index.ts"), "utf8")), "index.ts uses export *");
  });
});
