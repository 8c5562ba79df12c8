import type { FlowCore, WorkerOptions } from "@perdure/engine";
import { runWorkerProcess } from "@perdure/engine/testing";
import { parseEngineAddress } from "./engine-address.ts";
import { agentWorkerReadyLine, engineAddressEnvironmentVariable } from "./worker-process-protocol.ts";

/** Options of {@link runAgentWorkerProcess}. */
export interface RunAgentWorkerProcessOptions {
  /**
   * The engine to run on.
   * @default the `PERDURE_ENGINE_ADDRESS` environment variable
   */
  engineAddress?: string;
  /**
   * Overrides of the Worker options. `concurrency` defaults to 8, and
   * `livenessTimeoutMs` to 1500 so another Worker reclaims a killed
   * process's attempts within about two seconds.
   * @default {}
   */
  workerOptions?: Partial<Omit<WorkerOptions, "store" | "flows">>;
}

interface ResolvedRunAgentWorkerProcessOptions {
  databasePath: string;
  workerOptions: Partial<Omit<WorkerOptions, "store" | "flows">>;
}

function resolveRunAgentWorkerProcessOptions(options: RunAgentWorkerProcessOptions): ResolvedRunAgentWorkerProcessOptions {
  const engineAddress = options.engineAddress ?? process.env[engineAddressEnvironmentVariable];
  if (engineAddress === undefined || engineAddress === "") {
    throw new Error(`set ${engineAddressEnvironmentVariable} to the engine address (KillableWorkerProcess.start does) or pass engineAddress`);
  }
  const parsed = parseEngineAddress(engineAddress);
  // PostgreSQL: runWorkerProcess opens SQLite files only; give it a store opener when the PostgreSQL store lands.
  return {
    databasePath: parsed.databasePath,
    workerOptions: { concurrency: 8, livenessTimeoutMs: 1500, ...options.workerOptions },
  };
}

/**
 * The body of a Worker child module started by `KillableWorkerProcess.start`:
 * opens the engine named by `PERDURE_ENGINE_ADDRESS` (SQLite,
 * `process-crash-safe`, 20 ms poll), runs a Worker with 8 concurrent tasks,
 * prints `perdure agents test Worker ready <workerId>`, and on SIGTERM drains
 * the Worker, closes the store and exits 0. It exits by itself when the
 * parent test process dies.
 *
 * @example
 * // agent-worker-main.ts
 * import { runAgentWorkerProcess } from "@perdure/agents/testing";
 * import { supportSessionFlow } from "./support-session-flow.ts";
 * await runAgentWorkerProcess([supportSessionFlow]);
 */
export async function runAgentWorkerProcess(flows: readonly FlowCore[], options: RunAgentWorkerProcessOptions = {}): Promise<void> {
  const resolved = resolveRunAgentWorkerProcessOptions(options);
  await runWorkerProcess({
    flows,
    storePath: resolved.databasePath,
    storeOptions: { durability: "process-crash-safe", pollIntervalMs: 20 },
    workerOptions: resolved.workerOptions,
    readyLinePrefix: agentWorkerReadyLine,
  });
}
