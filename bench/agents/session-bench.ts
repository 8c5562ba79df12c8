import { setImmediate as nextMacrotask, setTimeout as sleep } from "node:timers/promises";
import { createAgentSessionFlow, type AgentSessionFlow } from "@perdure/agents";
import { Client, Worker, type Store } from "@perdure/engine";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import { openTemporaryBenchmarkStore, WorkerErrorCollector, type TemporaryBenchmarkStore } from "../engine/support.ts";
import { BenchScriptedRunner, FinalAnswerSignals } from "./scripted-runner.ts";

/** A session Flow with the scripted runner, a Worker and a Client on a fresh SQLite store. */
export interface SessionBench {
  temporary: TemporaryBenchmarkStore;
  flow: AgentSessionFlow;
  runner: BenchScriptedRunner;
  signals: FinalAnswerSignals;
  client: Client;
  worker: Worker;
  errors: WorkerErrorCollector;
  dispose(): Promise<void>;
}

export async function openSessionBench(durability: SqliteDurability, workerConcurrency = 8): Promise<SessionBench> {
  const temporary = openTemporaryBenchmarkStore(durability);
  const signals = new FinalAnswerSignals();
  const runner = new BenchScriptedRunner(signals);
  const flow = createAgentSessionFlow(runner, "BenchAgent");
  const errors = new WorkerErrorCollector();
  const worker = new Worker({ store: temporary.store, flows: [flow], concurrency: workerConcurrency, onError: errors.onError });
  const client = new Client({ store: temporary.store });
  await worker.start();
  return {
    temporary,
    flow,
    runner,
    signals,
    client,
    worker,
    errors,
    dispose: async () => {
      await worker.close();
      await temporary.dispose();
    },
  };
}

/** One timed turn: from the `send_user_message` call to the commit that ends the turn. */
export interface TurnTiming {
  ms: number;
  /** When the turn ended, on the `performance.now()` clock. */
  endedAt: number;
  /** `AgentState` reads it took to see the committed end (the only measuring cost). */
  confirmReads: number;
}

/**
 * Resolves once the committed `AgentState` shows turn `turnNumber` ended.
 * It is called after the runner's final answer. RunModel then writes two
 * events (`usage_recorded`, `turn_completed`), each in its own short
 * transaction, and commits. Those awaits settle in microtasks, because
 * `node:sqlite` is synchronous. So after one macrotask the commit is
 * normally queued on the store's single connection ahead of this read, and
 * one read sees the ended turn. Each read is one more transaction (about
 * 0.05 ms); their count is reported.
 */
export async function confirmTurnEnded(bench: Pick<SessionBench, "client" | "flow">, sessionId: string, turnNumber: number): Promise<number> {
  await nextMacrotask();
  for (let reads = 1; ; reads++) {
    const [state] = await bench.client.getAttributes(sessionId, bench.flow.agentState);
    if (state !== undefined && state.turnCount >= turnNumber && state.activeTurnId === null) {
      if (state.lastTurnError !== null) throw new Error(`session ${sessionId} turn ${turnNumber} failed: ${state.lastTurnError}`);
      return reads;
    }
    if (reads > 20_000) throw new Error(`session ${sessionId} turn ${turnNumber} did not end after its final answer (${JSON.stringify(state)})`);
    await (reads < 1000 ? nextMacrotask() : sleep(1));
  }
}

/** Sends one message and waits for the turn it starts to end. */
export async function runOneTurn(bench: SessionBench, sessionId: string, turnNumber: number): Promise<TurnTiming> {
  const finalAnswer = bench.signals.expect(sessionId);
  const startedAt = performance.now();
  const accepted = await bench.client.invokeRPC(bench.flow.sendUserMessage, sessionId, { text: `Where is order ${turnNumber}?` });
  if (!accepted) throw new Error(`session ${sessionId} refused message ${turnNumber}`);
  await finalAnswer;
  const confirmReads = await confirmTurnEnded(bench, sessionId, turnNumber);
  const endedAt = performance.now();
  return { ms: endedAt - startedAt, endedAt, confirmReads };
}

/** Starts a session without a first message; it waits in `AwaitUserMessage`. */
export async function startSession(bench: SessionBench, sessionId: string): Promise<void> {
  await bench.client.start(bench.flow, sessionId, {});
}

/** Checks a session's committed state after the run: every turn ended, 4 messages each, no error. */
export async function checkSessionState(bench: SessionBench, sessionId: string, turns: number): Promise<void> {
  const [state] = await bench.client.getAttributes(sessionId, bench.flow.agentState);
  if (state?.turnCount !== turns || state.messageCount !== 4 * turns || state.activeTurnId !== null || state.lastTurnError !== null) {
    throw new Error(`session ${sessionId} after ${turns} turns has state ${JSON.stringify(state)}`);
  }
}

/**
 * Counts `store.transaction` calls while `work` runs, by wrapping the
 * method on this store object (and restoring it afterwards). Only the
 * counting phase uses it, never a timed one.
 */
export async function countTransactions<TResult>(store: Store, work: () => Promise<TResult>): Promise<{ result: TResult; transactions: number }> {
  let transactions = 0;
  const original = store.transaction.bind(store);
  const counting: Store["transaction"] = (body) => {
    transactions += 1;
    return original(body);
  };
  Object.defineProperty(store, "transaction", { value: counting, configurable: true, writable: true });
  try {
    const result = await work();
    return { result, transactions };
  } finally {
    delete (store as { transaction?: unknown }).transaction;
  }
}

/** The p-th percentile (0–100) by the nearest-rank method. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}
