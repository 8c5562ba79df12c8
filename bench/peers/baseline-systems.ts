/**
 * Perdure from another checkout (PERDURE_BENCH_BASELINE=<folder of that
 * checkout>), loaded from its TypeScript sources, so that a change is
 * measured before and after in one interleaved run. Its flow is built with
 * that checkout's own definitions, so no object crosses the two engines.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setImmediate as nextMacrotask } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { SystemEntry } from "./run.ts";
import type { WorkloadSystem } from "./workload.ts";

type EngineModule = typeof import("@perdure/engine");
type SqliteModule = typeof import("@perdure/engine/sqlite");
type PostgresModule = typeof import("@perdure/engine/postgres");

async function load<TModule>(root: string, path: string): Promise<TModule> {
  return await import(pathToFileURL(resolve(root, "packages/engine/src", path)).href) as TModule;
}

async function openBaseline(root: string, kind: "postgres" | "full" | "process-crash-safe", concurrency: number, connectionString: () => string): Promise<WorkloadSystem> {
  const engine = await load<EngineModule>(root, "index.ts");
  const finished = new Map<string, () => void>();
  const Noop = engine.defineStep<{ remaining: number }>("Noop", {
    execute: (context, input) => {
      if (input.remaining > 0) return engine.moveTo("Noop", { remaining: input.remaining - 1 });
      finished.get(context.flowId)?.();
      return engine.completeFlow();
    },
  });
  const flow = engine.defineFlow({ type: "PeerChain", start: "Noop", steps: [Noop] });
  let store: import("@perdure/engine").Store;
  let dispose: () => Promise<void>;
  if (kind === "postgres") {
    const { PostgresStore } = await load<PostgresModule>(root, "postgres/index.ts");
    const schema = `perdure_bench_${randomBytes(6).toString("hex")}`;
    const url = connectionString();
    const opened = await PostgresStore.open({ connectionString: url, schema, poolSize: concurrency + 2 });
    store = opened;
    dispose = async () => {
      await opened.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await client.end();
    };
  } else {
    const { SqliteStore } = await load<SqliteModule>(root, "sqlite/index.ts");
    const folder = mkdtempSync(join(tmpdir(), "perdure-bench-baseline-"));
    const opened = SqliteStore.open({ path: join(folder, "engine.db"), durability: kind });
    store = opened;
    dispose = async () => {
      await opened.close();
      rmSync(folder, { recursive: true, force: true });
    };
  }
  const errors: unknown[] = [];
  const worker = new engine.Worker({ store, flows: [flow], concurrency, onError: (error) => errors.push(error) });
  const client = new engine.Client({ store });
  await worker.start();
  const label = kind === "postgres" ? "PostgreSQL" : kind === "full" ? "SQLite FULL" : "SQLite NORMAL";
  return {
    name: `Perdure before (${label})`,
    async runFlow(flowId, steps) {
      const done = new Promise<void>((resolveDone) => finished.set(flowId, resolveDone));
      await client.start(flow, flowId, { remaining: steps });
      await done;
      finished.delete(flowId);
      await nextMacrotask();
      while ((await client.describe(flowId)).status === "running") await nextMacrotask();
      if (errors.length > 0) throw new Error(`the baseline Worker reported ${errors.length} error(s); first: ${String(errors[0])}`);
    },
    async close() {
      await worker.close();
      await dispose();
    },
  };
}

/** The baseline's systems when PERDURE_BENCH_BASELINE names a checkout; none otherwise. */
export function baselineSystems(): SystemEntry[] {
  const root = process.env["PERDURE_BENCH_BASELINE"];
  if (root === undefined || root === "") return [];
  return [
    { key: "baseline-postgres", counted: true, open: ({ postgres }) => openBaseline(root, "postgres", 64, () => postgres().connectionString) },
    { key: "baseline-sqlite-full", counted: true, open: () => openBaseline(root, "full", 64, () => "") },
    { key: "baseline-sqlite-normal", counted: true, open: () => openBaseline(root, "process-crash-safe", 64, () => "") },
  ];
}
