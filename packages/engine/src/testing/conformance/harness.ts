import { Client } from "../../client/client.ts";
import type { FlowCore } from "../../flow/flow.ts";
import type { Store } from "../../store/store.ts";
import { Worker, type WorkerOptions } from "../../worker/worker.ts";
import { pollUntil } from "../poll-until.ts";

/** A store under test, freshly created for one test. */
export interface OpenedStore {
  store: Store;
  /** Opens a second connection to the same database, as another process would. */
  reopen(): Promise<Store>;
  dispose(): Promise<void>;
}

/** What a store implementation gives the conformance suite. */
export interface StoreConformanceOptions {
  /** Shown in test names, such as `sqlite`. */
  name: string;
  /** Creates an empty store (a fresh file, schema or database) for one test. */
  openStore(): Promise<OpenedStore>;
}

/** A store with a Client and (optionally) a Worker, torn down together. */
export interface TestEnvironment {
  opened: OpenedStore;
  store: Store;
  client: Client;
  worker: Worker | undefined;
  startWorker(options?: Partial<WorkerOptions>): Promise<Worker>;
  stopWorker(): Promise<void>;
  waitForStatus(flowId: string, status: string, timeoutMs?: number): Promise<void>;
  dispose(): Promise<void>;
}

export async function startEnvironment(
  options: StoreConformanceOptions,
  flows: readonly FlowCore[],
  workerOptions: Partial<WorkerOptions> | false = {},
): Promise<TestEnvironment> {
  const opened = await options.openStore();
  const client = new Client({ store: opened.store });
  const environment: TestEnvironment = {
    opened,
    store: opened.store,
    client,
    worker: undefined,
    async startWorker(overrides = {}) {
      const worker = new Worker({ store: opened.store, flows, concurrency: 8, livenessTimeoutMs: 1000, pollIntervalMs: 20, onError: () => undefined, ...overrides });
      await worker.start();
      environment.worker = worker;
      return worker;
    },
    async stopWorker() {
      await environment.worker?.close();
      environment.worker = undefined;
    },
    async waitForStatus(flowId, status, timeoutMs = 10_000) {
      await pollUntil(async () => (await client.describe(flowId)).status === status, { timeoutMs, description: `Flow ${flowId} to be ${status}` });
    },
    async dispose() {
      await environment.worker?.close();
      await opened.dispose();
    },
  };
  if (workerOptions !== false) await environment.startWorker(workerOptions);
  return environment;
}

/** Waits until the Flow has an execution of this Step type in this status. */
export async function waitForExecution(client: Client, flowId: string, stepType: string, status: string, timeoutMs = 10_000): Promise<void> {
  await pollUntil(async () => (await client.describe(flowId)).executions.some((execution) => execution.stepType === stepType && execution.status === status), {
    timeoutMs,
    description: `${stepType} of ${flowId} to be ${status}`,
  });
}

/** A promise with its resolve function, for gates inside handlers. */
export function deferred<TValue = void>(): { promise: Promise<TValue>; resolve: (value: TValue) => void } {
  let resolve!: (value: TValue) => void;
  const promise = new Promise<TValue>((settle) => { resolve = settle; });
  return { promise, resolve };
}
