/**
 * Perdure as an {@link AgentTurnSystem}: the durable agent session of
 * `@perdure/agents` with a scripted runner, a Worker and a Client in this
 * process, on a fresh schema of the bench's PostgreSQL server or a fresh
 * SQLite file. A turn is `send_user_message`, then the session's Steps
 * (every model call and every tool call its own committed Step), to the
 * commit that sets `AgentState` back to waiting.
 */
import { setImmediate as nextMacrotask } from "node:timers/promises";
import { createAgentSessionFlow, type AgentSessionFlow, type AgentTurnContext, type AgentTurnOutcome } from "@perdure/agents";
import { ScriptedAgentRunner } from "@perdure/agents/testing";
import { Client, Worker, type Store } from "@perdure/engine";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import { FinalAnswerSignals } from "../agents/scripted-runner.ts";
import { createBenchmarkPostgresSchema } from "../engine/scenarios/postgres-support.ts";
import { openTemporaryBenchmarkStore, WorkerErrorCollector } from "../engine/support.ts";
import { readToolName, runReadTool, runWriteTool, scriptedModelReply, writeToolName } from "./scripted-turn.ts";
import type { AgentTurnSystem } from "./turn-workload.ts";

class BenchTurnRunner extends ScriptedAgentRunner {
  private readonly signals: FinalAnswerSignals;

  constructor(signals: FinalAnswerSignals) {
    super((input) => {
      const reply = scriptedModelReply(input.modelCall, input.turnId);
      return "toolCall" in reply ? { toolCalls: [reply.toolCall] } : reply;
    }, {
      [readToolName]: { effect: "read", execute: async (argumentsValue) => runReadTool(argumentsValue) },
      [writeToolName]: { effect: "idempotent_write", execute: async (argumentsValue) => runWriteTool(argumentsValue) },
    });
    this.signals = signals;
  }

  override async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const outcome = await super.runModelStep(turn);
    if (outcome.kind === "turn_completed") this.signals.signal(turn.flowId);
    return outcome;
  }
}

/** Reads of `AgentState` the Client made to see turns end, over all turns so far. */
export interface PerdureAgentSystem extends AgentTurnSystem {
  confirmReads: number;
  turns: number;
  readonly store: Store;
}

function perdureAgentSystem(name: string, store: Store, concurrency: number, dispose: () => Promise<void>): PerdureAgentSystem & { start(): Promise<void> } {
  const signals = new FinalAnswerSignals();
  const flow: AgentSessionFlow = createAgentSessionFlow(new BenchTurnRunner(signals), "BenchTurnAgent");
  const errors = new WorkerErrorCollector();
  const worker = new Worker({ store, flows: [flow], concurrency, onError: errors.onError });
  const client = new Client({ store });
  const system = {
    name,
    store,
    confirmReads: 0,
    turns: 0,
    start: () => worker.start(),
    async startSession(sessionId: string) {
      await client.start(flow, sessionId, {});
    },
    async runTurn(sessionId: string, turnNumber: number) {
      const finalAnswer = signals.expect(sessionId);
      const accepted = await client.invokeRPC(flow.sendUserMessage, sessionId, { text: `Where is order ${turnNumber}?` });
      if (!accepted) throw new Error(`session ${sessionId} refused message ${turnNumber}`);
      // The model's final answer is announced in process; the turn ends at RunModel's commit after it.
      await finalAnswer;
      for (let reads = 1; ; reads++) {
        const [state] = await client.getAttributes(sessionId, flow.agentState);
        if (state !== undefined && state.turnCount >= turnNumber && state.activeTurnId === null) {
          if (state.lastTurnError !== null) throw new Error(`session ${sessionId} turn ${turnNumber} failed: ${state.lastTurnError}`);
          system.confirmReads += reads;
          system.turns += 1;
          break;
        }
        if (reads > 100_000) throw new Error(`session ${sessionId} turn ${turnNumber} did not end`);
        await nextMacrotask();
      }
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
  const store = await schema.open({ poolSize: Math.max(10, concurrency + 4) });
  const system = perdureAgentSystem("Perdure PostgreSQL", store, concurrency, () => schema.dispose());
  await system.start();
  return system;
}

export async function openPerdureAgentSqlite(durability: SqliteDurability, concurrency: number): Promise<PerdureAgentSystem> {
  const temporary = openTemporaryBenchmarkStore(durability);
  const system = perdureAgentSystem(durability === "full" ? "Perdure SQLite FULL" : "Perdure SQLite NORMAL", temporary.store, concurrency, () => temporary.dispose());
  await system.start();
  return system;
}
