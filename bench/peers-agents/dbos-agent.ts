/**
 * DBOS Transact (`@dbos-inc/dbos-sdk`, on PostgreSQL) as an
 * {@link AgentTurnSystem}, written as its documentation writes an agent
 * loop: one workflow per turn, whose every model call and tool call is a
 * step (`DBOS.runStep`), the loop running until the model answers.
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { modelLatency, readToolName, runReadTool, runWriteTool, scriptedModelReply, type ScriptedModelReply } from "./scripted-turn.ts";
import { schemaBytes } from "./store-bytes.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

interface TurnMessage {
  role: "user" | "assistant" | "tool";
  text: string;
}

const agentTurn = DBOS.registerWorkflow(async (orderId: string, userText: string): Promise<string> => {
  const messages: TurnMessage[] = [{ role: "user", text: userText }];
  for (let modelCall = 1; ; modelCall++) {
    const reply: ScriptedModelReply = await DBOS.runStep(async () => {
      await modelLatency();
      return scriptedModelReply(modelCall, orderId);
    }, { name: `model-${modelCall}` });
    if ("text" in reply) {
      messages.push({ role: "assistant", text: reply.text });
      return reply.text;
    }
    const { name, arguments: argumentsValue } = reply.toolCall;
    const output = await DBOS.runStep(() => Promise.resolve(name === readToolName ? runReadTool(argumentsValue) : runWriteTool(argumentsValue)), { name: `tool-${modelCall}-${name}` });
    messages.push({ role: "tool", text: output });
  }
}, { name: "perdureBenchAgentTurn" });

/** Opens DBOS on a database of its own on the server at `connectionString` (DBOS creates it). */
export async function openDbosAgent(connectionString: string, poolSize: number): Promise<AgentTurnSystem> {
  const url = new URL(connectionString);
  url.pathname = `/perdure_bench_dbos_agents_${process.pid}`;
  DBOS.setConfig({ name: "perdure-bench-agents", systemDatabaseUrl: url.toString(), systemDatabasePoolSize: poolSize, logLevel: "error" });
  await DBOS.launch();
  return {
    name: "DBOS 5.3 (PostgreSQL)",
    startSession: () => Promise.resolve(),
    bytesStored: () => schemaBytes(url.toString(), "dbos"),
    async runTurn(sessionId, turnNumber) {
      const handle = await DBOS.startWorkflow(agentTurn, { workflowID: `${sessionId}-turn-${turnNumber}` })(`${sessionId}-${turnNumber}`, `Where is order ${turnNumber}?`);
      const answer = await handle.getResult();
      if (!answer.startsWith("Order ")) throw new Error(`DBOS turn ${sessionId}/${turnNumber} answered ${answer}`);
    },
    async close() {
      await DBOS.shutdown();
      // The database is this run's own: drop it, so runs leave nothing on a shared server.
      const admin = new pg.Client({ connectionString });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(url.pathname.slice(1))} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
