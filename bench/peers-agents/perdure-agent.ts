/**
 * Perdure as an {@link AgentTurnSystem}: the durable agent session of
 * `@perdure/agents` with a scripted runner, a Worker and a Client in this
 * process, on a fresh schema of the bench's PostgreSQL server or a fresh
 * SQLite file. A turn is `send_user_message`, then the session's Steps
 * (every model call and every tool call its own committed Step), to the
 * commit that sets `AgentState` back to waiting.
 */
import { dirname } from "node:path";
import { createAgentSessionFlow, type AgentSessionFlow } from "@perdure/agents";
import { ScriptedAgentRunner } from "@perdure/agents/testing";
import { Client, Worker, type Store } from "@perdure/engine";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import { createBenchmarkPostgresSchema } from "../engine/scenarios/postgres-support.ts";
import { openTemporaryBenchmarkStore, WorkerErrorCollector } from "../engine/support.ts";
import { modelLatency, readToolName, runReadTool, runWriteTool, scriptedModelReply, writeToolName } from "./scripted-turn.ts";
import { directoryBytes, schemaBytes } from "./store-bytes.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

/** The scripted runner whose model call takes the run's model latency first. */
class DelayedScriptedRunner extends ScriptedAgentRunner {
  override async runModelStep(turn: Parameters<ScriptedAgentRunner["runModelStep"]>[0]): ReturnType<ScriptedAgentRunner["runModelStep"]> {
    await modelLatency();
    return super.runModelStep(turn);
  }
}

/** The session's runner: the scripted model and the two tools of `scripted-turn.ts`. */
function benchTurnRunner(): ScriptedAgentRunner {
  return new DelayedScriptedRunner((input) => {
    const reply = scriptedModelReply(input.modelCall, input.turnId);
    return "toolCall" in reply ? { toolCalls: [reply.toolCall] } : reply;
  }, {
    [readToolName]: { effect: "read", execute: async (argumentsValue) => runReadTool(argumentsValue) },
    [writeToolName]: { effect: "idempotent_write", execute: async (argumentsValue) => runWriteTool(argumentsValue) },
  });
}

/** Reads of `AgentState` the Client made to see turns end (`confirmReads`), over all turns so far. */
export interface PerdureAgentSystem extends AgentTurnSystem {
  confirmReads: number;
  turns: number;
  readonly store: Store;
}

function perdureAgentSystem(name: string, store: Store, concurrency: number, bytesStored: () => Promise<number>, dispose: () => Promise<void>): PerdureAgentSystem & { start(): Promise<void> } {
  const flow: AgentSessionFlow = createAgentSessionFlow(benchTurnRunner(), "BenchTurnAgent");
  const errors = new WorkerErrorCollector();
  const worker = new Worker({ store, flows: [flow], concurrency, onError: errors.onError });
  const client = new Client({ store });
  // Counts the Client's reads of AgentState by session: `waitForAttributes` reads through `getAttributes`.
  const readsBySession = new Map<string, number>();
  const getAttributes = client.getAttributes.bind(client);
  client.getAttributes = ((...args: Parameters<typeof getAttributes>) => {
    readsBySession.set(args[0], (readsBySession.get(args[0]) ?? 0) + 1);
    return getAttributes(...args);
  }) as typeof client.getAttributes;
  const system = {
    name,
    store,
    confirmReads: 0,
    turns: 0,
    start: () => worker.start(),
    bytesStored,
    async startSession(sessionId: string) {
      await client.start(flow, sessionId, {});
    },
    async runTurn(sessionId: string, turnNumber: number) {
      const accepted = await client.invokeRPC(flow.sendUserMessage, sessionId, { text: `Where is order ${turnNumber}?` });
      if (!accepted) throw new Error(`session ${sessionId} refused message ${turnNumber}`);
      // As a Client in any process would: read AgentState again after the session's commits
      // (or its Stream wake-ups, or the poll interval) until the turn has ended.
      readsBySession.delete(sessionId);
      const [state] = await client.waitForAttributes(sessionId, [flow.agentState], ([current]) =>
        current !== undefined && current.turnCount >= turnNumber && current.activeTurnId === null, { timeoutMs: 60_000 });
      if (state === undefined || state.turnCount < turnNumber || state.activeTurnId !== null) throw new Error(`session ${sessionId} turn ${turnNumber} did not end (${JSON.stringify(state)})`);
      if (state.lastTurnError !== null) throw new Error(`session ${sessionId} turn ${turnNumber} failed: ${state.lastTurnError}`);
      system.confirmReads += readsBySession.get(sessionId) ?? 0;
      readsBySession.delete(sessionId);
      system.turns += 1;
      errors.throwIfAny();
    },
    async close() {
      await worker.close();
      await dispose();
    },
  };
  return system;
}

export async function openPerdureAgentPostgres(connectionString: string, concurrency: number): Promise<PerdureAgentSystem> {
  const schema = createBenchmarkPostgresSchema(connectionString);
  // A loaded machine can take seconds to open a connection; the bench waits rather than fail a turn.
  const store = await schema.open({ poolSize: Math.max(10, concurrency + 4), connectTimeoutMs: 60_000 });
  const system = perdureAgentSystem("Perdure PostgreSQL", store, concurrency, () => schemaBytes(connectionString, schema.schema), () => schema.dispose());
  await system.start();
  return system;
}

export async function openPerdureAgentSqlite(durability: SqliteDurability, concurrency: number): Promise<PerdureAgentSystem> {
  const temporary = openTemporaryBenchmarkStore(durability);
  const system = perdureAgentSystem(durability === "full" ? "Perdure SQLite FULL" : "Perdure SQLite NORMAL", temporary.store, concurrency, () => Promise.resolve(directoryBytes(dirname(temporary.path))), () => temporary.dispose());
  await system.start();
  return system;
}
