/**
 * Mastra (`@mastra/core`) as an {@link AgentTurnSystem}, written as its
 * documentation writes an agent with memory: an `Agent` with two tools
 * (`createTool`) and a `Memory` (`@mastra/memory`) on Mastra's storage,
 * LibSQL on a local file (`@mastra/libsql`) or PostgreSQL (`@mastra/pg`).
 * A turn is one `agent.generate` on the session's thread. Memory saves the
 * turn's messages at the end of the turn, so a crash mid-turn loses it and
 * the model and tool calls run again. The model is the AI SDK's
 * `MockLanguageModelV4` answering from the shared script.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import type { MastraCompositeStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import pg from "pg";
import { z } from "zod";
import { directoryBytes, schemaBytes, withClient } from "./store-bytes.ts";
import { modelLatency, readToolName, runReadTool, runWriteTool, scriptedModelReply, writeToolName } from "./scripted-turn.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

type StreamOptions = Parameters<MockLanguageModelV4["doStream"]>[0];
type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart> ? TPart : never;
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage = {
  inputTokens: { total: 20, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: undefined, reasoning: undefined },
};

/** The script's reply to a prompt: the model call is the number of assistant messages after the last user message, plus one. */
function replyOf(prompt: StreamOptions["prompt"]): { reply: ReturnType<typeof scriptedModelReply>; toolCallId: string } {
  const lastUser = prompt.findLastIndex((message) => message.role === "user");
  const user = prompt[lastUser];
  const orderId = user?.role === "user" ? user.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "";
  const modelCall = prompt.slice(lastUser + 1).filter((message) => message.role === "assistant").length + 1;
  return { reply: scriptedModelReply(modelCall, orderId), toolCallId: `call-${orderId}-${modelCall}` };
}

/** The reply as a streamed answer (`agent.stream`). */
function replyParts(prompt: StreamOptions["prompt"]): StreamPart[] {
  const { reply, toolCallId } = replyOf(prompt);
  if ("text" in reply) {
    return [
      { type: "text-start", id: "answer" },
      { type: "text-delta", id: "answer", delta: reply.text },
      { type: "text-end", id: "answer" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
    ];
  }
  return [
    { type: "tool-call", toolCallId, toolName: reply.toolCall.name, input: JSON.stringify(reply.toolCall.arguments) },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool-calls" }, usage },
  ];
}

/** The reply as a whole answer (`agent.generate`). */
function replyResult(prompt: StreamOptions["prompt"]): GenerateResult {
  const { reply, toolCallId } = replyOf(prompt);
  if ("text" in reply) return { content: [{ type: "text", text: reply.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
  return {
    content: [{ type: "tool-call", toolCallId, toolName: reply.toolCall.name, input: JSON.stringify(reply.toolCall.arguments) }],
    finishReason: { unified: "tool-calls", raw: "tool-calls" },
    usage,
    warnings: [],
  };
}

function scriptedModel(): MockLanguageModelV4 {
  const model: MockLanguageModelV4 = new MockLanguageModelV4({
    provider: "perdure.scripted",
    modelId: "scripted-model",
    doGenerate: async (options) => {
      // The mock records every call; a bench of thousands of turns keeps none.
      model.doGenerateCalls.length = 0;
      await modelLatency();
      return replyResult(options.prompt);
    },
    doStream: async (options) => {
      model.doStreamCalls.length = 0;
      await modelLatency();
      return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...replyParts(options.prompt)]) };
    },
  });
  return model;
}

const lookupOrder = createTool({
  id: readToolName,
  description: "Looks an order up.",
  inputSchema: z.object({ order_id: z.string() }),
  execute: async (input) => runReadTool(input),
});
const tagOrder = createTool({
  id: writeToolName,
  description: "Tags an order (idempotent).",
  inputSchema: z.object({ order_id: z.string(), tag: z.string() }),
  execute: async (input) => runWriteTool(input),
});

function mastraVersion(): string {
  const version = (createRequire(import.meta.url)("@mastra/core/package.json") as { version: string }).version;
  return version.split(".").slice(0, 2).join(".");
}

function mastraSystem(name: string, storage: MastraCompositeStore, bytesStored: () => Promise<number>, dispose: () => Promise<void>): AgentTurnSystem {
  // Mastra 1.71 bundles older @ai-sdk/provider types; at run time it calls any LanguageModelV4.
  const model = scriptedModel() as unknown as MastraModelConfig;
  const memory = new Memory({ storage, options: { lastMessages: 20 } });
  const agent = new Agent<string>({ id: "bench-orders", name: "bench-orders", instructions: "Help with orders.", model, tools: { [readToolName]: lookupOrder, [writeToolName]: tagOrder }, memory });
  return {
    name: `Mastra ${mastraVersion()} ${name}`,
    startSession: () => Promise.resolve(),
    async runTurn(sessionId, turnNumber) {
      const result = await agent.generate(`${sessionId}-${turnNumber}`, { memory: { thread: sessionId, resource: "bench" }, maxSteps: 5 });
      if (!result.text.startsWith("Order ")) throw new Error(`Mastra turn ${sessionId}/${turnNumber} answered ${result.text}`);
    },
    bytesStored,
    close: dispose,
  };
}

/** Mastra's LibSQL storage on a fresh local file. */
export async function openMastraLibsql(): Promise<AgentTurnSystem> {
  const { LibSQLStore } = await import("@mastra/libsql");
  const folder = mkdtempSync(join(tmpdir(), "perdure-bench-mastra-"));
  const storage = new LibSQLStore({ id: "bench-libsql", url: `file:${join(folder, "mastra.db")}` });
  await storage.init();
  return mastraSystem("LibSQL (file)", storage, () => Promise.resolve(directoryBytes(folder)), async () => {
    rmSync(folder, { recursive: true, force: true });
  });
}

/** Mastra's PostgreSQL storage on a schema of its own on the bench's server. */
export async function openMastraPostgres(connectionString: string): Promise<AgentTurnSystem> {
  const { PostgresStore } = await import("@mastra/pg");
  const schemaName = `perdure_bench_mastra_${process.pid}`;
  await withClient(connectionString, (client) => client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schemaName)}`));
  const storage = new PostgresStore({ id: "bench-pg", connectionString, schemaName });
  await storage.init();
  return mastraSystem("PostgreSQL", storage, () => schemaBytes(connectionString, schemaName), async () => {
    await storage.close();
    await withClient(connectionString, (client) => client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schemaName)} CASCADE`));
  });
}
