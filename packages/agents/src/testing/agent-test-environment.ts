import { Client, Worker, type FlowCore, type Store, type WorkerOptions } from "@perdure/engine";
import { openStoreAtAddress } from "./open-store-at-address.ts";

/** Options of {@link AgentTestEnvironment.start}. */
export interface AgentTestEnvironmentOptions {
  /** The engine to open, such as `PrivateEngine`'s `address`. */
  engineAddress: string;
  /** Flow definitions the in-process Worker runs. */
  flows: readonly FlowCore[];
  /**
   * Whether to run a Worker in this process. Turn it off when Worker child
   * processes (`KillableWorkerProcess`) do the work.
   * @default true
   */
  isWorkerInProcess?: boolean;
  /**
   * Overrides of the in-process Worker's options. `concurrency` defaults to 8
   * and `livenessTimeoutMs` to 1500, as in Worker child processes.
   * @default {}
   */
  workerOptions?: Partial<Omit<WorkerOptions, "store" | "flows">>;
}

interface ResolvedAgentTestEnvironmentOptions {
  engineAddress: string;
  flows: readonly FlowCore[];
  isWorkerInProcess: boolean;
  workerOptions: Partial<Omit<WorkerOptions, "store" | "flows">>;
}

function resolveAgentTestEnvironmentOptions(options: AgentTestEnvironmentOptions): ResolvedAgentTestEnvironmentOptions {
  return {
    engineAddress: options.engineAddress,
    flows: options.flows,
    isWorkerInProcess: options.isWorkerInProcess ?? true,
    workerOptions: { concurrency: 8, livenessTimeoutMs: 1500, ...options.workerOptions },
  };
}

/**
 * What a test needs to drive agent sessions on an engine: a store connection,
 * a Client, and optionally a Worker in this process. `close()` stops the
 * Worker (draining its attempts) and closes the store.
 *
 * @example
 * const engine = await PrivateEngine.start();
 * const environment = await AgentTestEnvironment.start({ engineAddress: engine.address, flows: [sessionFlow] });
 * after(async () => { await environment.close(); await engine.stop(); });
 * await environment.client.start(sessionFlow, "session-1", {});
 */
export class AgentTestEnvironment {
  /** The environment's own store connection. */
  readonly store: Store;
  /** A Client on {@link AgentTestEnvironment.store}. */
  readonly client: Client;
  /** The in-process Worker, or `undefined` when `isWorkerInProcess` is false. */
  readonly worker: Worker | undefined;
  private isClosed = false;

  private constructor(store: Store, worker: Worker | undefined) {
    this.store = store;
    this.client = new Client({ store });
    this.worker = worker;
  }

  /** Opens the store and starts the Worker when asked; the Worker is registered when this resolves. */
  static async start(options: AgentTestEnvironmentOptions): Promise<AgentTestEnvironment> {
    const resolved = resolveAgentTestEnvironmentOptions(options);
    const store = openStoreAtAddress(resolved.engineAddress);
    if (!resolved.isWorkerInProcess) return new AgentTestEnvironment(store, undefined);
    try {
      const worker = new Worker({ ...resolved.workerOptions, store, flows: resolved.flows });
      await worker.start();
      return new AgentTestEnvironment(store, worker);
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** Drains and stops the Worker, then closes the store. Safe to call twice. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    try {
      await this.worker?.close();
    } finally {
      await this.store.close();
    }
  }
}
