/**
 * The figures of docs/capacity.md, measured on PostgreSQL: sessions of the
 * benchmark's scripted agent (a turn = a model call asking for one read
 * tool, the tool, a model call answering) run by one in-process Worker on a
 * temporary schema of the test cluster.
 *
 * - Steps/s and turns/s, and the CPU time PostgreSQL's backends serving this
 *   process spent per Step and per turn (read from /proc for the backends
 *   of this process's connections), hence Steps and turns per PostgreSQL core.
 * - Rows and bytes per turn, per table, from the first and the second turn
 *   of every session (the second is the steady state), and the history rows
 *   the Flow's `historyRetention` keeps.
 * - The Worker's heap and RSS per thousand idle sessions (waiting for a user
 *   message) after a full GC.
 *
 *   node --expose-gc bench/agents/capacity.ts [--sessions=100] [--idle=1000]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createAgentSessionFlow } from "@perdure/agents";
import { AgentSessionTestClient } from "@perdure/agents/testing";
import { Client, Worker } from "@perdure/engine";
import { PostgresStore } from "@perdure/engine/postgres";
import { createTemporaryPostgresSchema, requireTestDatabaseUrl } from "@perdure/engine/testing";
import { BenchScriptedRunner, FinalAnswerSignals } from "./scripted-runner.ts";

const { values } = parseArgs({ options: { sessions: { type: "string" }, idle: { type: "string" } } });
const sessionCount = Number(values.sessions ?? "100");
const idleCount = Number(values.idle ?? "1000");
const applicationName = `perdure-capacity-${process.pid}`;
const clockTicksPerSecond = 100;

const temporary = createTemporaryPostgresSchema(requireTestDatabaseUrl());
const store = await PostgresStore.open({ connectionString: temporary.connectionString, schema: temporary.schema, applicationName });
const runner = new BenchScriptedRunner(new FinalAnswerSignals());
const flow = createAgentSessionFlow(runner, "CapacityAgent");
const worker = new Worker({ store, flows: [flow], concurrency: 8 });
await worker.start();
const client = new Client({ store });
const sessions = new AgentSessionTestClient(client, flow);

/** psql-free reads of the schema through a second store connection. */
async function query<TRow>(sql: string): Promise<TRow[]> {
  const pg = (await import("pg")).default;
  const connection = new pg.Client({ connectionString: temporary.connectionString });
  await connection.connect();
  try {
    return (await connection.query(sql)).rows as TRow[];
  } finally {
    await connection.end();
  }
}

async function backendCpuSeconds(): Promise<number> {
  const rows = await query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = '${applicationName}'`);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The backend ended; its time is lost to this count.
    }
  }
  return ticks / clockTicksPerSecond;
}

interface TableSize {
  table: string;
  rows: number;
  bytes: number;
}

async function tableSizes(): Promise<Map<string, TableSize>> {
  const tables = await query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = '${temporary.schema}' AND table_type = 'BASE TABLE'`);
  const sizes = new Map<string, TableSize>();
  for (const { table_name: table } of tables) {
    const [row] = await query<{ rows: string; bytes: string }>(`SELECT (SELECT count(*) FROM "${temporary.schema}"."${table}") AS rows, pg_total_relation_size('"${temporary.schema}"."${table}"') AS bytes`);
    sizes.set(table, { table, rows: Number(row?.rows ?? 0), bytes: Number(row?.bytes ?? 0) });
  }
  return sizes;
}

async function stepsCommitted(): Promise<number> {
  const [row] = await query<{ count: string }>(`SELECT count(*) AS count FROM "${temporary.schema}".history WHERE status = 'completed'`);
  return Number(row?.count ?? 0);
}

async function runTurns(turn: number): Promise<{ seconds: number; steps: number; cpuSeconds: number }> {
  const stepsBefore = await stepsCommitted();
  const cpuBefore = await backendCpuSeconds();
  const started = performance.now();
  for (let index = 0; index < sessionCount; index += 1) {
    const id = `capacity-${index}`;
    if (turn === 1) await sessions.startSession(id, { initialMessage: `where is order ${index}?` });
    else await sessions.sendUserMessage(id, `and order ${index + 1}?`);
  }
  for (let index = 0; index < sessionCount; index += 1) await sessions.waitForTurnCount(`capacity-${index}`, turn, { timeoutMs: 300_000 });
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = (await backendCpuSeconds()) - cpuBefore;
  return { seconds, steps: (await stepsCommitted()) - stepsBefore, cpuSeconds };
}

function difference(after: Map<string, TableSize>, before: Map<string, TableSize>): Record<string, { rows: number; bytes: number }> {
  const result: Record<string, { rows: number; bytes: number }> = {};
  for (const [table, size] of after) {
    const earlier = before.get(table) ?? { rows: 0, bytes: 0 };
    if (size.rows === earlier.rows && size.bytes === earlier.bytes) continue;
    result[table] = { rows: (size.rows - earlier.rows) / sessionCount, bytes: Math.round((size.bytes - earlier.bytes) / sessionCount) };
  }
  return result;
}

function memory(): { heapMiB: number; rssMiB: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { heapMiB: usage.heapUsed / 2 ** 20, rssMiB: usage.rss / 2 ** 20 };
}

try {
  const empty = await tableSizes();
  const first = await runTurns(1);
  const afterFirst = await tableSizes();
  const second = await runTurns(2);
  const afterSecond = await tableSizes();

  const memoryBefore = memory();
  for (let index = 0; index < idleCount; index += 1) await sessions.startSession(`idle-${index}`);
  for (let index = 0; index < idleCount; index += 1) await sessions.waitForState(`idle-${index}`, (state) => state.status === "waiting_for_user_message", { timeoutMs: 300_000 });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const memoryAfter = memory();

  const perTurn = (run: { seconds: number; steps: number; cpuSeconds: number }) => ({
    turnsPerSecond: Number((sessionCount / run.seconds).toFixed(1)),
    stepsPerSecond: Number((run.steps / run.seconds).toFixed(0)),
    stepsPerTurn: Number((run.steps / sessionCount).toFixed(1)),
    postgresCpuMsPerStep: Number(((run.cpuSeconds * 1000) / run.steps).toFixed(2)),
    postgresCpuMsPerTurn: Number(((run.cpuSeconds * 1000) / sessionCount).toFixed(1)),
    stepsPerPostgresCoreSecond: run.cpuSeconds > 0 ? Math.round(run.steps / run.cpuSeconds) : null,
    turnsPerPostgresCoreSecond: run.cpuSeconds > 0 ? Number((sessionCount / run.cpuSeconds).toFixed(1)) : null,
  });
  console.log(JSON.stringify({
    sessions: sessionCount,
    firstTurn: perTurn(first),
    secondTurn: perTurn(second),
    perSessionFirstTurn: difference(afterFirst, empty),
    perSessionSecondTurn: difference(afterSecond, afterFirst),
    historyRetention: flow.historyRetention,
    idleSessions: idleCount,
    workerHeapMiBPerThousandIdle: Number((((memoryAfter.heapMiB - memoryBefore.heapMiB) * 1000) / idleCount).toFixed(2)),
    workerRssMiBPerThousandIdle: Number((((memoryAfter.rssMiB - memoryBefore.rssMiB) * 1000) / idleCount).toFixed(2)),
    workerHeapMiB: Number(memoryAfter.heapMiB.toFixed(1)),
  }, null, 2));
} finally {
  await worker.close();
  await store.close();
  await temporary.dispose();
}
