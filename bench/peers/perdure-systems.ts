/**
 * Perdure as a {@link WorkloadSystem}: a Worker and a Client in this process
 * on SQLite (process-crash-safe or full) or on PostgreSQL, running the no-op
 * chain flow. A flow of N Steps is a chain of N no-op Step executions after
 * its start Step (so a 0-Step flow is a start Step that completes at once),
 * which is what a DBOS workflow calling N steps or a Restate handler running
 * N `ctx.run` blocks records.
 */
import { Client, Worker } from "@perdure/engine";
import type { SqliteDurability } from "@perdure/engine/sqlite";
import { createNoopChainFlow } from "../engine/flows.ts";
import { createBenchmarkPostgresSchema } from "../engine/scenarios/postgres-support.ts";
import { openTemporaryBenchmarkStore, WorkerErrorCollector } from "../engine/support.ts";
import type { WorkloadSystem } from "./workload.ts";

export interface PerdureSystemOptions {
  /** Worker concurrency: at least the number of concurrent callers. */
  concurrency: number;
  /** PostgreSQL only: false runs every operation as a transaction, as a store without the one-request functions does. */
  oneRequestCommits?: boolean;
}

function perdureSystem(name: string, store: import("@perdure/engine").Store, options: PerdureSystemOptions, dispose: () => Promise<void>): WorkloadSystem & { start(): Promise<void> } {
  const errors = new WorkerErrorCollector();
  const flow = createNoopChainFlow("PeerChain");
  const worker = new Worker({ store, flows: [flow], concurrency: options.concurrency, onError: errors.onError });
  const client = new Client({ store });
  return {
    name,
    start: () => worker.start(),
    async runFlow(flowId, steps) {
      // The chain's start Step counts down: `remaining` more Steps after it.
      await client.start(flow, flowId, { remaining: steps });
      // As a DBOS handle's getResult: wait for the committed end, then read it.
      const ended = await client.waitForFlow(flowId, { timeoutMs: 60_000 });
      if (ended.status !== "completed") throw new Error(`flow ${flowId} ended ${ended.status}: ${ended.error ?? ""}`);
      errors.throwIfAny();
    },
    async close() {
      await worker.close();
      await dispose();
    },
  };
}

/** Perdure on a fresh SQLite file. */
export async function openPerdureSqlite(durability: SqliteDurability, options: PerdureSystemOptions): Promise<WorkloadSystem> {
  const temporary = openTemporaryBenchmarkStore(durability);
  const label = durability === "full" ? "Perdure SQLite FULL" : "Perdure SQLite NORMAL";
  const system = perdureSystem(label, temporary.store, options, () => temporary.dispose());
  await system.start();
  return system;
}

/** Perdure on a fresh schema of the PostgreSQL server at `connectionString`. */
export async function openPerdurePostgres(connectionString: string, options: PerdureSystemOptions): Promise<WorkloadSystem> {
  const schema = createBenchmarkPostgresSchema(connectionString);
  const store = await schema.open({ poolSize: Math.max(10, options.concurrency + 2) });
  if (options.oneRequestCommits === false) store.oneRequest = undefined;
  const label = options.oneRequestCommits === false ? "Perdure PostgreSQL, general path" : "Perdure PostgreSQL";
  const system = perdureSystem(label, store, options, () => schema.dispose());
  await system.start();
  return system;
}
