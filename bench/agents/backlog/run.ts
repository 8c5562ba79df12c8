/**
 * Turns under a backlog, and what grows with the number of sessions, measured
 * from outside: a Worker process (concurrency 8) and this Client process
 * share a real store (SQLite FULL in a temporary folder, or a temporary
 * schema of the test PostgreSQL cluster). `--sessions` agent sessions (the
 * benchmark's scripted agent: a model call asking for one read tool, the
 * tool, a model call answering) are started and left waiting; then each
 * round sends one message to every session at once (at most 64 RPCs in
 * flight) and waits for every turn to end.
 *
 * The Worker is `perdure worker` itself, run from source (`--worker=cli`,
 * the default): its memory is read from /proc after it has been idle longer
 * than its idle memory release waits (13 s), with no forced GC. With
 * `--worker=bench` it is this file (`--role=worker`), which after three GCs
 * reports heapUsed, V8's young generation and pages, RSS by mapping (V8's
 * 256 KiB pages, glibc's main arena, the rest) and the prepared statements
 * SQLite caches. There `PERDURE_BENCH_LAST_RESORT=1` makes those GCs V8's
 * last-resort kind, `PERDURE_BENCH_SHRINK=1` runs `PRAGMA shrink_memory`
 * first, `PERDURE_BENCH_HEAP_SNAPSHOTS=3,61` writes heap snapshots at those
 * reports (1 is before the first round), and `PERDURE_BENCH_WORKER_FLAGS`
 * adds Node flags.
 *
 * Per round: the drain (first send to last answer), turns/s in the first
 * tenth of the drain, and per turn, read back from the Step history:
 * - `work`: its first Step's start to the commit of its answering model call;
 * - `sojourn`: its message's send to that commit;
 * - how far the turns' end order is from their send order (Spearman's rho).
 * Then, with every session waiting: the Worker's CPU over `--idle-seconds`
 * (20) and on PostgreSQL the rows the schema's tables returned per second
 * (pg_stat_user_tables, by table; `--idle-windows=N` repeats the window);
 * and the wake latency of `--wakes` (3) lone turns,
 * each a message to one waiting session, from its send to its answer's
 * commit.
 *
 *   node bench/agents/backlog/run.ts --store=sqlite|postgres [--sessions=2000] [--rounds=3] [--worker=cli|bench]
 *     [--idle-seconds=20] [--idle-windows=1] [--wakes=3] [--out=file.json]
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from "node:v8";
import { parseArgs } from "node:util";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client, Worker, type Store } from "@perdure/engine";
import { SqliteStore } from "@perdure/engine/sqlite";
import { createBacklogAgent } from "./backlog-agent.ts";

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
    worker: { type: "string" },
    "idle-seconds": { type: "string" },
    wakes: { type: "string" },
    "idle-windows": { type: "string" },
  },
});
const storeKind = values.store ?? "sqlite";
if (storeKind !== "sqlite" && storeKind !== "postgres") throw new Error(`--store ${storeKind} is invalid: use sqlite or postgres`);
const workerKind = values.worker ?? "cli";
if (workerKind !== "cli" && workerKind !== "bench") throw new Error(`--worker ${workerKind} is invalid: use cli or bench`);

async function openStore(): Promise<Store> {
  if (storeKind === "sqlite") return SqliteStore.open({ path: values.path!, durability: "full" });
  const { PostgresStore } = await import("@perdure/engine/postgres");
  return PostgresStore.open({ connectionString: values.url!, schema: values.schema!, poolSize: 8 });
}

const sessionFlow = createBacklogAgent;

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
  /** V8's heap pages resident (all spaces), its young generation's size, and what V8 itself mallocs. */
  v8PhysicalMiB: number;
  newSpaceMiB: number;
  v8MallocedMiB: number;
  /** Anonymous RSS not held by V8's heap pages: the native allocator (SQLite, node, libuv, pg's buffers). */
  nativeMiB?: number;
  /** Anonymous RSS in 256 KiB mappings (V8's heap pages, including pages V8 pooled and no longer counts), in glibc's main arena, and elsewhere. */
  v8PageMappingsMiB?: number;
  brkHeapMiB?: number;
  otherAnonymousMiB?: number;
}

/** V8's regular heap page: the size of the anonymous mappings it maps its pages in. */
const v8PageKiB = 256;

function rssByKind(): { anonymousMiB?: number; fileMiB?: number; v8PageMappingsMiB?: number; brkHeapMiB?: number; otherAnonymousMiB?: number } {
  try {
    const text = readFileSync("/proc/self/smaps_rollup", "utf8");
    const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? "0");
    // Anonymous memory by mapping: V8 maps each heap page alone (256 KiB), glibc's main arena is `[heap]`, the rest
    // is glibc's thread arenas, large mallocs, V8's large objects and code, and thread stacks.
    let v8Pages = 0;
    let brkHeap = 0;
    let other = 0;
    let size = 0;
    let name = "";
    for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
      const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (mapping !== null) {
        size = (Number.parseInt(mapping[2]!, 16) - Number.parseInt(mapping[1]!, 16)) / 1024;
        name = mapping[3]!.trim();
        continue;
      }
      const anonymous = /^Anonymous:\s+(\d+) kB/.exec(line);
      if (anonymous === null) continue;
      const amount = Number(anonymous[1]);
      if (name === "[heap]") brkHeap += amount;
      else if (name === "" && size === v8PageKiB) v8Pages += amount;
      else other += amount;
    }
    const toMiB = (value: number): number => Number((value / 1024).toFixed(1));
    return { anonymousMiB: toMiB(kib("Anonymous")), fileMiB: toMiB(kib("Rss") - kib("Anonymous")), v8PageMappingsMiB: toMiB(v8Pages), brkHeapMiB: toMiB(brkHeap), otherAnonymousMiB: toMiB(other) };
  } catch {
    return {};
  }
}

async function runWorker(): Promise<void> {
  const store = await openStore();
  const worker = new Worker({ store, flows: [sessionFlow()], concurrency: Number(values.concurrency ?? "8") });
  await worker.start();
  const mib = (bytes: number): number => Number((bytes / 2 ** 20).toFixed(1));
  // PERDURE_BENCH_HEAP_SNAPSHOTS=2,40: writes a heap snapshot (in the working folder) at those memory reports, to compare.
  const snapshotReports = new Set((process.env["PERDURE_BENCH_HEAP_SNAPSHOTS"] ?? "").split(",").filter((item) => item !== "").map(Number));
  let reports = 0;
  process.on("message", (message: { kind: string }) => {
    if (message.kind === "memory") {
      reports += 1;
      const report = reports;
      void (async () => {
        const gc = (globalThis as { gc?: (options?: unknown) => void }).gc;
        for (let index = 0; index < 3; index += 1) {
          // PERDURE_BENCH_LAST_RESORT=1: V8's memory-reducing collection, which also shrinks the young generation and frees pooled pages.
          if (process.env["PERDURE_BENCH_LAST_RESORT"] === "1") gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
          else gc?.();
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const connection = (store as unknown as { connection?: { statements?: Map<string, unknown>; database?: { exec: (sql: string) => void } } }).connection;
        if (process.env["PERDURE_BENCH_SHRINK"] === "1") connection?.database?.exec("PRAGMA shrink_memory");
        if (process.env["PERDURE_BENCH_SHRINK"] === "1") await new Promise((resolve) => setTimeout(resolve, 200));
        if (snapshotReports.has(report)) writeHeapSnapshot(`backlog-worker-${process.pid}-${report}.heapsnapshot`);
        const usage = process.memoryUsage();
        const heap = getHeapStatistics();
        const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
        const byKind = rssByKind();
        const v8PhysicalMiB = mib(heap.total_physical_size);
        process.send!({ kind: "memory", report: { statements: connection?.statements?.size, heapUsedMiB: mib(usage.heapUsed), heapTotalMiB: mib(usage.heapTotal), rssMiB: mib(usage.rss), ...byKind, externalMiB: mib(usage.external), arrayBuffersMiB: mib(usage.arrayBuffers), v8PhysicalMiB, newSpaceMiB: mib(newSpace), v8MallocedMiB: mib(heap.malloced_memory), ...(byKind.anonymousMiB === undefined ? {} : { nativeMiB: Number((byKind.anonymousMiB - v8PhysicalMiB).toFixed(1)) }) } satisfies MemoryReport });
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

/** The Worker process, whichever kind runs. */
interface WorkerProcess {
  readonly pid: number;
  /** Its memory now that the round's work is done. */
  memory(): Promise<Partial<MemoryReport>>;
  close(): Promise<void>;
}

const repositoryRoot = fileURLToPath(new URL("../../..", import.meta.url));
const clockTicksPerSecond = 100;

/** User plus system CPU seconds a process has spent (Linux). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
}

/** RSS, anonymous and file pages of another process, from its smaps_rollup. */
function residentOf(pid: number): Partial<MemoryReport> {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? "0");
  const toMiB = (value: number): number => Number((value / 1024).toFixed(1));
  return { rssMiB: toMiB(kib("Rss")), anonymousMiB: toMiB(kib("Anonymous")), fileMiB: toMiB(kib("Rss") - kib("Anonymous")) };
}

/**
 * `perdure worker` itself (from source), concurrency 8, as a deployment runs it. Its memory is read from
 * outside after it has been idle for longer than its idle memory release waits (10 s), with no forced GC.
 */
async function startCliWorker(location: { path?: string; databaseUrl?: string }): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--conditions=perdure-source", join(repositoryRoot, "packages/cli/src/cli.ts"), "worker", "--concurrency", values.concurrency ?? "8", ...(location.path === undefined ? [] : ["--db", location.path]), fileURLToPath(new URL("./backlog-agent.ts", import.meta.url))], {
    env: { ...process.env, ...(location.databaseUrl === undefined ? {} : { PERDURE_DATABASE_URL: location.databaseUrl }) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (/perdure worker: \S+ running/.test(output)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`perdure worker exited with ${code} before it started: ${output}`)));
  });
  child.stdout.resume();
  return {
    pid: child.pid!,
    memory: async () => {
      await new Promise((resolve) => setTimeout(resolve, 13_000));
      return residentOf(child.pid!);
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** This file as the Worker (`--role=worker`): reports the heap and RSS by kind after forced GCs. */
async function startBenchWorker(location: { path?: string; postgres?: { connectionString: string; schema: string } }): Promise<WorkerProcess> {
  const args = ["--role=worker", `--store=${storeKind}`, ...(location.path === undefined ? [] : [`--path=${location.path}`]), ...(location.postgres === undefined ? [] : [`--url=${location.postgres.connectionString}`, `--schema=${location.postgres.schema}`])];
  const child = fork(new URL(import.meta.url).pathname, args, { execArgv: [...process.execArgv, "--expose-gc", ...(process.env["PERDURE_BENCH_WORKER_FLAGS"] ?? "").split(/\s+/).filter((flag) => flag !== "")], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise<void>((resolve) => child.once("message", () => resolve()));
  return {
    pid: child.pid!,
    memory: () => request(child, "memory"),
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ kind: "close" });
      await exited;
    },
  };
}

/** Per table of the schema: rows returned by sequential scans and by index scans, and sequential scans (pg_stat_user_tables). */
async function postgresTableReads(connectionString: string, schema: string): Promise<Map<string, { seqRows: number; indexRows: number; seqScans: number }>> {
  const pg = (await import("pg")).default;
  const connection = new pg.Client({ connectionString });
  await connection.connect();
  try {
    const result = await connection.query<{ relname: string; seq_tup_read: string | null; idx_tup_fetch: string | null; seq_scan: string | null }>("SELECT relname, seq_tup_read, idx_tup_fetch, seq_scan FROM pg_stat_user_tables WHERE schemaname = $1", [schema]);
    return new Map(result.rows.map((row) => [row.relname, { seqRows: Number(row.seq_tup_read ?? 0), indexRows: Number(row.idx_tup_fetch ?? 0), seqScans: Number(row.seq_scan ?? 0) }]));
  } finally {
    await connection.end();
  }
}

/** Rows per second the schema's tables returned between two readings, in total and by table (tables that returned any). */
function rowsReadRates(before: Map<string, { seqRows: number; indexRows: number; seqScans: number }>, after: Map<string, { seqRows: number; indexRows: number; seqScans: number }>, seconds: number) {
  let total = 0;
  let seqScans = 0;
  const byTable: Record<string, { seqRowsPerSecond: number; indexRowsPerSecond: number }> = {};
  for (const [table, reading] of after) {
    const earlier = before.get(table) ?? { seqRows: 0, indexRows: 0, seqScans: 0 };
    const seqRows = reading.seqRows - earlier.seqRows;
    const indexRows = reading.indexRows - earlier.indexRows;
    seqScans += reading.seqScans - earlier.seqScans;
    total += seqRows + indexRows;
    if (seqRows + indexRows > 0) byTable[table] = { seqRowsPerSecond: Number((seqRows / seconds).toFixed(1)), indexRowsPerSecond: Number((indexRows / seconds).toFixed(1)) };
  }
  return { rowsReadPerSecond: Number((total / seconds).toFixed(1)), seqScansPerSecond: Number((seqScans / seconds).toFixed(2)), byTable };
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
  const worker = workerKind === "cli"
    ? await startCliWorker(path === undefined ? { databaseUrl: `${postgres!.connectionString}${postgres!.connectionString.includes("?") ? "&" : "?"}schema=${postgres!.schema}` } : { path })
    : await startBenchWorker(path === undefined ? { postgres: postgres! } : { path });
  const client = new Client({ store });
  const flow = sessionFlow();
  const idleSeconds = Number(values["idle-seconds"] ?? "20");
  const wakes = Number(values.wakes ?? "3");
  const idleWindows = Number(values["idle-windows"] ?? "1");
  const sessions = new AgentSessionTestClient(client, flow);
  const ids = Array.from({ length: sessionCount }, (_, index) => `backlog-${index}`);
  const results: unknown[] = [];
  try {
    const createStarted = performance.now();
    for (let index = 0; index < ids.length; index += 64) await Promise.all(ids.slice(index, index + 64).map((id) => sessions.startSession(id)));
    for (const id of ids) await sessions.waitForState(id, (state) => state.status === "waiting_for_user_message", { timeoutMs: 600_000 });
    const createSeconds = (performance.now() - createStarted) / 1000;
    const memoryIdle = await worker.memory();
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
      const memory = await worker.memory();
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
    // Idle: every session waits for a user message. The Worker's CPU over the window, and on PostgreSQL the rows
    // its polls read (from the schema's table statistics, which backends flush about once a second).
    // `--idle-windows` windows one after another, to see whether idle reads settle (autovacuum's ANALYZE, for one).
    const idle: unknown[] = [];
    for (let window = 0; window < idleWindows; window += 1) {
      const cpuBefore = cpuSecondsOf(worker.pid);
      const readsBefore = postgres === undefined ? undefined : await postgresTableReads(postgres.connectionString, postgres.schema);
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      const readsAfter = postgres === undefined ? undefined : await postgresTableReads(postgres.connectionString, postgres.schema);
      idle.push({
        workerCpuPercent: Number(((cpuSecondsOf(worker.pid) - cpuBefore) / idleSeconds * 100).toFixed(2)),
        ...(readsBefore === undefined || readsAfter === undefined ? {} : rowsReadRates(readsBefore, readsAfter, idleSeconds)),
      });
    }
    // Wake latency: one message to one waiting session among all the others, from its send to its answer's commit.
    const wakeMs: number[] = [];
    for (let wake = 0; wake < wakes; wake += 1) {
      const id = ids[Math.floor((wake + 0.5) * ids.length / wakes)]!;
      // Distinct sessions, each with one turn per round so far.
      const before = rounds;
      const sent = store.clock.now();
      await sessions.sendUserMessage(id, `where is order ${id}?`);
      await sessions.waitForTurnCount(id, before + 1, { timeoutMs: 600_000 });
      const history = (await client.getStepHistory(id, { limit: 1000 })).filter((entry) => entry.startedAt.getTime() >= sent - 1);
      wakeMs.push(Math.max(...history.filter((entry) => entry.stepType === "RunModel" && entry.method === "execute").map((entry) => entry.finishedAt.getTime())) - sent);
    }
    const atIdle = { store: storeKind, sessions: sessionCount, worker: workerKind, loadAverage: Number(loadavg()[0]?.toFixed(1)), idleSeconds, idle, wakeMs: wakeMs.sort((a, b) => a - b) };
    results.push(atIdle);
    console.error(JSON.stringify(atIdle));
  } finally {
    await worker.close();
    await store.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    await postgres?.dispose();
  }
  if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
}

if (values.role === "worker") await runWorker();
else await runClient();
