/**
 * Child process of the idle-memory scenario: runs only a Worker on the
 * scenario's database, so its memory is the Worker's and nothing else's.
 * Talks to the parent over IPC; run with --expose-gc.
 */
import { Worker } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { setTimeout as sleep } from "node:timers/promises";
import { createIdleWaiterFlow } from "../flows.ts";

/** Memory after a full garbage collection, in bytes. */
export interface MemorySample {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
}

/** What the child reports to the parent. */
export type IdleMemoryWorkerReport =
  | { kind: "measured"; beforeWorker: MemorySample; afterAsking: MemorySample; afterIdle: MemorySample; askMs: number; asked: number; workerErrors: string[] }
  | { kind: "failed"; error: string };

/** What the parent sends the child. */
export interface IdleMemoryWorkerCommand {
  kind: "close";
}

const collectGarbage = (globalThis as { gc?: () => void }).gc;

function sampleMemory(): MemorySample {
  // Twice: the first pass can leave weakly held objects for the second.
  collectGarbage?.();
  collectGarbage?.();
  const usage = process.memoryUsage();
  return { heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, rss: usage.rss, external: usage.external, arrayBuffers: usage.arrayBuffers };
}

function report(message: IdleMemoryWorkerReport): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const [path, expectedText, idleText] = process.argv.slice(2);
  if (path === undefined || expectedText === undefined || idleText === undefined) throw new Error("usage: idle-memory-worker.ts <database path> <flows to ask> <idle ms>");
  if (collectGarbage === undefined) throw new Error("run with --expose-gc so memory is measured after a full collection");
  const expected = Number(expectedText);
  const idleMs = Number(idleText);
  let asked = 0;
  const flow = createIdleWaiterFlow(() => {
    asked++;
  });
  const store = SqliteStore.open({ path, durability: "process-crash-safe" });
  const workerErrors: string[] = [];
  const worker = new Worker({ store, flows: [flow], onError: (error) => workerErrors.push(String(error)) });
  const beforeWorker = sampleMemory();
  const startedAt = performance.now();
  await worker.start();
  // Every ask has committed once the count is reached and nothing is running.
  while (asked < expected || worker.activeCount > 0) await sleep(5);
  const askMs = performance.now() - startedAt;
  const afterAsking = sampleMemory();
  // Idle for a while with the Worker polling, then sample again: idle flows must cost nothing over time.
  await sleep(idleMs);
  const afterIdle = sampleMemory();
  report({ kind: "measured", beforeWorker, afterAsking, afterIdle, askMs, asked, workerErrors });
  await new Promise<void>((resolve) => process.once("message", (command: IdleMemoryWorkerCommand) => {
    if (command.kind === "close") resolve();
  }));
  await worker.close();
  await store.close();
  process.disconnect();
}

main().catch((error: unknown) => {
  report({ kind: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
  process.disconnect();
});
