/**
 * Turns under a backlog, measured from outside: a Worker process (this file
 * with `--role=worker`, concurrency 8) and this Client process share a real
 * store (SQLite FULL in a temporary folder, or a temporary schema of the test
 * PostgreSQL cluster). `--sessions` agent sessions (the benchmark's scripted
 * agent: a model call asking for one read tool, the tool, a model call
 * answering) are started and left waiting; then each round sends one message
 * to every session at once (at most 64 RPCs in flight) and waits for every
 * turn to end.
 *
 * Per round: the drain (first send to last answer), turns/s in the first
 * tenth of the drain, and per turn, read back from the Step history:
 * - `work`: its first Step's start to the commit of its answering model call;
 * - `sojourn`: its message's send to that commit;
 * - how far the turns' end order is from their send order (Spearman's rho).
 * After each round the Worker process runs a full GC and reports heapUsed,
 * RSS (anonymous and file pages), external and array buffers, and on SQLite
 * the prepared statements its connection caches, so rounds show whether
 * memory comes back. `PERDURE_BENCH_SHRINK=1` runs `PRAGMA shrink_memory`
 * (SQLite frees its page cache) before each report, to tell that cache
 * apart from the rest.
 *
 *   node bench/agents/backlog/run.ts --store=sqlite|postgres [--sessions=2000] [--rounds=3] [--out=file.json]
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createAgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client, Worker, type Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { BenchScriptedRunner, FinalAnswerSignals } from "../scripted-runner.ts";

const { values } = parseArgs({
  options: {
    role: { type: "string" },
    store: { type: "string" },
    sessions: { type: "string" },
    rounds: { type: "string" },
    out: { type: "string" },
    path: { type: "string" },
    url: { type: "string" },
    schema: { type: "string" },
    concurrency: { type: "string" },
  },
});
const storeKind = values.store ?? "sqlite";
if (storeKind !== "sqlite" && storeKind !== "postgres") throw new Error(`--store ${storeKind} is invalid: use sqlite or postgres`);
const flowType = "BacklogAgent";

async function openStore(): Promise<Store> {
  if (storeKind === "sqlite") return SqliteStore.open({ path: values.path!, durability: "full" });
  const { PostgresStore } = await import("@perdure/engine/postgres");
  return PostgresStore.open({ connectionString: values.url!, schema: values.schema!, poolSize: 8 });
}

function sessionFlow() {
  return createAgentSessionFlow(new BenchScriptedRunner(new FinalAnswerSignals()), flowType);
}

interface MemoryReport {
  /** SQLite: prepared statements the connection caches. */
  statements?: number | undefined;
  heapUsedMiB: number;
  heapTotalMiB: number;
  rssMiB: number;
  /** RSS by kind from /proc/self/smaps_rollup (Linux): anonymous memory, and file pages (code, mapped files). */
  anonymousMiB?: number;
  fileMiB?: number;
  externalMiB: number;
  arrayBuffersMiB: number;
}

function rssByKind(): { anonymousMiB?: number; fileMiB?: number } {
  try {
    const text = readFileSync("/proc/self/smaps_rollup", "utf8");
    const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? "0");
    return { anonymousMiB: Number((kib("Anonymous") / 1024).toFixed(1)), fileMiB: Number(((kib("Rss") - kib("Anonymous")) / 1024).toFixed(1)) };
  } catch {
    return {};
  }
}

async function runWorker(): Promise<void> {
  const store = await openStore();
  const worker = new Worker({ store, flows: [sessionFlow()], concurrency: Number(values.concurrency ?? "8") });
  await worker.start();
  const mib = (bytes: number): number => Number((bytes / 2 ** 20).toFixed(1));
  process.on("message", (message: { kind: string }) => {
    if (message.kind === "memory") {
      void (async () => {
        const gc = (globalThis as { gc?: () => void }).gc;
        for (let index = 0; index < 3; index += 1) {
          gc?.();
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const connection = (store as unknown as { connection?: { statements?: Map<string, unknown>; database?: { exec: (sql: string) => void } } }).connection;
        if (process.env["PERDURE_BENCH_SHRINK"] === "1") connection?.database?.exec("PRAGMA shrink_memory");
        if (process.env["PERDURE_BENCH_SHRINK"] === "1") await new Promise((resolve) => setTimeout(resolve, 200));
        const usage = process.memoryUsage();
        process.send!({ kind: "memory", report: { statements: connection?.statements?.size,  heapUsedMiB: mib(usage.heapUsed), heapTotalMiB: mib(usage.heapTotal), rssMiB: mib(usage.rss), ...rssByKind(), externalMiB: mib(usage.external), arrayBuffersMiB: mib(usage.arrayBuffers) } satisfies MemoryReport });
      })();
    }
    if (message.kind === "close") {
      void (async () => {
        await worker.close();
        await store.close();
        process.exit(0);
      })();
    }
  });
  process.send!({ kind: "ready" });
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** Spearman's rank correlation of two orders of the same items (1: the same order). */
function rankCorrelation(first: readonly string[], second: readonly string[]): number {
  const rank = new Map(second.map((item, index) => [item, index]));
  const n = first.length;
  let sum = 0;
  first.forEach((item, index) => {
    const difference = index - (rank.get(item) ?? index);
    sum += difference * difference;
  });
  return n < 2 ? 1 : 1 - (6 * sum) / (n * (n * n - 1));
}

function request(child: ChildProcess, kind: string): Promise<MemoryReport> {
  return new Promise((resolve) => {
    const listener = (message: { kind: string; report: MemoryReport }) => {
      if (message.kind !== kind) return;
      child.off("message", listener);
      resolve(message.report);
    };
    child.on("message", listener);
    child.send({ kind });
  });
}

async function runClient(): Promise<void> {
  const sessionCount = Number(values.sessions ?? "2000");
  const rounds = Number(values.rounds ?? "3");
  let path: string | undefined;
  let folder: string | undefined;
  let postgres: { connectionString: string; schema: string; open: () => Promise<{ close: () => Promise<void> }>; dispose: () => Promise<void> } | undefined;
  if (storeKind === "sqlite") {
    folder = mkdtempSync(join(tmpdir(), "perdure-backlog-"));
    path = join(folder, "engine.db");
  } else {
    const { createTemporaryPostgresSchema, requireTestDatabaseUrl } = await import("@perdure/engine/testing");
    postgres = createTemporaryPostgresSchema(requireTestDatabaseUrl());
    // Creates the schema before the Worker process opens it.
    await (await postgres.open()).close();
  }
  const store: Store = storeKind === "sqlite" ? SqliteStore.open({ path: path!, durability: "full" }) : await (await import("@perdure/engine/postgres")).PostgresStore.open({ connectionString: postgres!.connectionString, schema: postgres!.schema, poolSize: 8 });
  const args = ["--role=worker", `--store=${storeKind}`, ...(path === undefined ? [] : [`--path=${path}`]), ...(postgres === undefined ? [] : [`--url=${postgres.connectionString}`, `--schema=${postgres.schema}`])];
  const child = fork(new URL(import.meta.url).pathname, args, { execArgv: [...process.execArgv, "--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise<void>((resolve) => child.once("message", () => resolve()));
  const client = new Client({ store });
  const flow = sessionFlow();
  const sessions = new AgentSessionTestClient(client, flow);
  const ids = Array.from({ length: sessionCount }, (_, index) => `backlog-${index}`);
  const results: unknown[] = [];
  try {
    const createStarted = performance.now();
    for (let index = 0; index < ids.length; index += 64) await Promise.all(ids.slice(index, index + 64).map((id) => sessions.startSession(id)));
    for (const id of ids) await sessions.waitForState(id, (state) => state.status === "waiting_for_user_message", { timeoutMs: 600_000 });
    const createSeconds = (performance.now() - createStarted) / 1000;
    const memoryIdle = await request(child, "memory");
    console.error(JSON.stringify({ store: storeKind, sessions: sessionCount, createSeconds: Number(createSeconds.toFixed(1)), memoryIdle }));
    for (let round = 1; round <= rounds; round += 1) {
      const load = loadavg()[0];
      const sentAt = new Map<string, number>();
      const firstSend = store.clock.now();
      let next = 0;
      await Promise.all(Array.from({ length: 64 }, async () => {
        while (next < ids.length) {
          const id = ids[next]!;
          next += 1;
          sentAt.set(id, store.clock.now());
          await sessions.sendUserMessage(id, `where is order ${id}?`);
        }
      }));
      const sendSeconds = (store.clock.now() - firstSend) / 1000;
      for (const id of ids) await sessions.waitForTurnCount(id, round, { timeoutMs: 600_000 });
      const turns: { id: string; sent: number; started: number; answered: number }[] = [];
      for (const id of ids) {
        const since = sentAt.get(id)!;
        const history = (await client.getStepHistory(id, { limit: 1000 })).filter((entry) => entry.startedAt.getTime() >= since - 1);
        const started = Math.min(...history.map((entry) => entry.startedAt.getTime()));
        const answered = Math.max(...history.filter((entry) => entry.stepType === "RunModel" && entry.method === "execute").map((entry) => entry.finishedAt.getTime()));
        turns.push({ id, sent: since, started, answered });
      }
      const lastAnswer = Math.max(...turns.map((turn) => turn.answered));
      const drainMs = lastAnswer - firstSend;
      const work = turns.map((turn) => turn.answered - turn.started).sort((a, b) => a - b);
      const sojourn = turns.map((turn) => turn.answered - turn.sent).sort((a, b) => a - b);
      const tenth = firstSend + drainMs / 10;
      const firstTenthTurnsPerSecond = turns.filter((turn) => turn.answered <= tenth).length / (drainMs / 10 / 1000);
      const endOrder = [...turns].sort((a, b) => a.answered - b.answered).map((turn) => turn.id);
      const sendOrder = [...turns].sort((a, b) => a.sent - b.sent).map((turn) => turn.id);
      const memory = await request(child, "memory");
      const result = {
        store: storeKind,
        sessions: sessionCount,
        round,
        loadAverage: Number(load?.toFixed(1)),
        sendSeconds: Number(sendSeconds.toFixed(2)),
        drainSeconds: Number((drainMs / 1000).toFixed(2)),
        turnsPerSecond: Number((sessionCount / (drainMs / 1000)).toFixed(1)),
        firstTenthTurnsPerSecond: Number(firstTenthTurnsPerSecond.toFixed(1)),
        workMs: { p50: percentile(work, 0.5), p99: percentile(work, 0.99), max: work.at(-1) },
        sojournMs: { p50: percentile(sojourn, 0.5), p99: percentile(sojourn, 0.99) },
        workP50OverDrain: Number((percentile(work, 0.5) / drainMs).toFixed(3)),
        endOrderVsSendOrder: Number(rankCorrelation(endOrder, sendOrder).toFixed(3)),
        workerMemory: memory,
      };
      results.push(result);
      console.error(JSON.stringify(result));
    }
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.send({ kind: "close" });
    await exited;
    await store.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    await postgres?.dispose();
  }
  if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
}

if (values.role === "worker") await runWorker();
else await runClient();
