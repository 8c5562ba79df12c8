/**
 * LangGraph JS (`@langchain/langgraph`) as an {@link AgentTurnSystem},
 * written as its documentation writes a tool-calling agent: a `StateGraph`
 * over `MessagesAnnotation` with a model node and a `ToolNode`, routed by
 * `toolsCondition`, compiled with a checkpointer and invoked once per turn
 * with the session as its `thread_id` and durability `"sync"` (every
 * super-step's checkpoint written before the next one starts). The model is
 * a LangChain chat model that answers from the shared script.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import pg from "pg";
import { z } from "zod";
import { modelLatency, readToolName, runReadTool, runWriteTool, scriptedModelReply, writeToolName } from "./scripted-turn.ts";
import { directoryBytes, schemaBytes, withClient } from "./store-bytes.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

/** A chat model that answers from the shared script: the turn's model call is the number of AI messages after the last human one, plus one. */
class ScriptedChatModel extends BaseChatModel {
  constructor(params: BaseChatModelParams = {}) {
    super(params);
  }

  _llmType(): string {
    return "perdure-scripted";
  }

  override bindTools(_tools: StructuredToolInterface[]): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    await modelLatency();
    const lastHuman = messages.findLastIndex((message) => HumanMessage.isInstance(message));
    const orderId = messages[lastHuman]?.text ?? "";
    const modelCall = messages.slice(lastHuman + 1).filter((message) => AIMessage.isInstance(message)).length + 1;
    const reply = scriptedModelReply(modelCall, orderId);
    const message = "text" in reply
      ? new AIMessage({ content: reply.text })
      : new AIMessage({ content: "", tool_calls: [{ id: `call-${orderId}-${modelCall}`, name: reply.toolCall.name, args: reply.toolCall.arguments, type: "tool_call" }] });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

const tools = [
  tool((input: { order_id: string }) => runReadTool(input), { name: readToolName, description: "Looks an order up.", schema: z.object({ order_id: z.string() }) }),
  tool((input: { order_id: string; tag: string }) => runWriteTool(input), { name: writeToolName, description: "Tags an order (idempotent).", schema: z.object({ order_id: z.string(), tag: z.string() }) }),
];

function compileAgent(checkpointer: BaseCheckpointSaver | undefined) {
  const model = new ScriptedChatModel().bindTools(tools);
  const callModel = async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] });
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", callModel)
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile(checkpointer === undefined ? {} : { checkpointer });
}

function langGraphVersion(): string {
  const version = (createRequire(import.meta.url)("@langchain/langgraph/package.json") as { version: string }).version;
  return version.split(".").slice(0, 2).join(".");
}

function langGraphSystem(name: string, checkpointer: BaseCheckpointSaver | undefined, bytesStored: () => Promise<number>, dispose: () => Promise<void>): AgentTurnSystem {
  const agent = compileAgent(checkpointer);
  return {
    name: `LangGraph ${langGraphVersion()} ${name}`,
    startSession: () => Promise.resolve(),
    async runTurn(sessionId, turnNumber) {
      const result = await agent.invoke(
        { messages: [new HumanMessage(`${sessionId}-${turnNumber}`)] },
        { configurable: { thread_id: sessionId }, durability: "sync" },
      );
      const answer = result.messages.at(-1);
      if (answer === undefined || !answer.text.startsWith("Order ")) throw new Error(`LangGraph turn ${sessionId}/${turnNumber} answered ${answer?.text ?? "nothing"}`);
    },
    bytesStored,
    close: dispose,
  };
}

/** LangGraph without a checkpointer: the graph's own cost, for the overhead above it. */
export function openLangGraphInMemory(): AgentTurnSystem {
  return langGraphSystem("(no checkpointer)", undefined, () => Promise.resolve(0), () => Promise.resolve());
}

/** `SqliteSaver` on a fresh file: better-sqlite3's default (WAL, synchronous NORMAL) or synchronous FULL. */
export async function openLangGraphSqlite(synchronous: "default" | "full"): Promise<AgentTurnSystem> {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const folder = mkdtempSync(join(tmpdir(), "perdure-bench-langgraph-"));
  const saver = SqliteSaver.fromConnString(join(folder, "checkpoints.db"));
  // better-sqlite3's Database (its types are not installed: the saver is the only user).
  const database = saver.db as unknown as { pragma(source: string): unknown; close(): void };
  if (synchronous === "full") database.pragma("synchronous = FULL");
  return langGraphSystem(synchronous === "full" ? "SQLite FULL" : "SQLite (default: WAL, NORMAL)", saver, () => Promise.resolve(directoryBytes(folder)), async () => {
    database.close();
    rmSync(folder, { recursive: true, force: true });
  });
}

/** `PostgresSaver` on a schema of its own on the bench's server. */
export async function openLangGraphPostgres(connectionString: string): Promise<AgentTurnSystem> {
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const schema = `perdure_bench_langgraph_${process.pid}`;
  const saver = PostgresSaver.fromConnString(connectionString, { schema });
  await saver.setup();
  return langGraphSystem("PostgreSQL", saver, () => schemaBytes(connectionString, schema), async () => {
    await saver.end();
    await withClient(connectionString, (client) => client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`));
  });
}
