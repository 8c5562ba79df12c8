/**
 * DBOS Transact (`@dbos-inc/dbos-sdk`, on PostgreSQL) as a {@link WorkloadSystem}:
 * a workflow that runs N no-op steps (`DBOS.runStep`), started with its
 * workflow ID and awaited to its result, in this process, on its own
 * system database of the bench's PostgreSQL server.
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import type { WorkloadSystem } from "./workload.ts";

const noop = (): Promise<void> => Promise.resolve();

const chainWorkflow = DBOS.registerWorkflow(async (steps: number): Promise<number> => {
  for (let index = 0; index < steps; index++) await DBOS.runStep(noop, { name: `noop-${index}` });
  return steps;
}, { name: "perdureBenchChain" });

/** Opens DBOS on a database of its own on the server at `connectionString` (DBOS creates it). */
export async function openDbos(connectionString: string, options: { poolSize: number }): Promise<WorkloadSystem> {
  const url = new URL(connectionString);
  url.pathname = `/perdure_bench_dbos_${process.pid}`;
  DBOS.setConfig({ name: "perdure-bench", systemDatabaseUrl: url.toString(), systemDatabasePoolSize: options.poolSize, logLevel: "error" });
  await DBOS.launch();
  return {
    name: "DBOS 5.3 (PostgreSQL)",
    async runFlow(flowId, steps) {
      const handle = await DBOS.startWorkflow(chainWorkflow, { workflowID: flowId })(steps);
      const result = await handle.getResult();
      if (result !== steps) throw new Error(`DBOS workflow ${flowId} returned ${String(result)}, expected ${steps}`);
    },
    async close() {
      await DBOS.shutdown();
    },
  };
}
