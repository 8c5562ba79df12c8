/**
 * A Worker process for the PostgreSQL scale-out scenario: opens the store on
 * the schema the parent gives, hosts the no-op chain flow, and tells the
 * parent over IPC when a chain's final Step ran. Not a scenario of its own.
 *
 *   env PERDURE_BENCH_WORKER_URL, PERDURE_BENCH_WORKER_SCHEMA, PERDURE_BENCH_WORKER_CONCURRENCY
 */
import { Worker } from "@perdure/engine";
import { PostgresStore } from "@perdure/engine/postgres";
import { createNoopChainFlow, FinalStepSignals } from "../flows.ts";

export type PostgresWorkerReport =
  | { kind: "ready"; workerId: string }
  | { kind: "final"; flowId: string }
  | { kind: "worker-error"; error: string }
  | { kind: "failed"; error: string };

export type PostgresWorkerCommand = { kind: "close" };

function report(message: PostgresWorkerReport): void {
  process.send?.(message);
}

/** Forwards "final Step ran" to the parent instead of resolving a promise in this process. */
class ParentSignals extends FinalStepSignals {
  override signal(flowId: string): void {
    report({ kind: "final", flowId });
  }
}

const connectionString = process.env["PERDURE_BENCH_WORKER_URL"] ?? "";
const schema = process.env["PERDURE_BENCH_WORKER_SCHEMA"] ?? "";
const concurrency = Number(process.env["PERDURE_BENCH_WORKER_CONCURRENCY"] ?? "8");

try {
  const store = await PostgresStore.open({ connectionString, schema, migrate: false });
  const worker = new Worker({
    store,
    flows: [createNoopChainFlow("NoopChain", new ParentSignals())],
    concurrency,
    onError: (error) => report({ kind: "worker-error", error: String(error) }),
  });
  let closing = false;
  const shutDown = async (code: number): Promise<void> => {
    if (closing) return;
    closing = true;
    try {
      await worker.close();
      await store.close();
    } finally {
      process.exit(code);
    }
  };
  process.on("message", (message: PostgresWorkerCommand) => {
    if (message.kind === "close") void shutDown(0);
  });
  // The parent died or closed the channel: do not linger.
  process.on("disconnect", () => void shutDown(2));
  await worker.start();
  report({ kind: "ready", workerId: worker.workerId });
} catch (error) {
  report({ kind: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
}
