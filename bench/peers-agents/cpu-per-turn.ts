/**
 * CPU per agent turn at 16 sessions, Perdure on PostgreSQL and DBOS: this
 * process's CPU (Worker, Client and driver) and the CPU of every process of
 * the PostgreSQL cluster, per turn. On a machine shared with other work the
 * wall-clock ratios of run.ts swing with the load; CPU per turn moves much
 * less, and it is what bounds turns/s when the cores are busy.
 *
 *   scripts/start-test-postgres.sh    # a private cluster; prints its URL and folder
 *   PERDURE_TEST_DATABASE_URL=... PERDURE_TEST_POSTGRES_DIR=... node bench/peers-agents/cpu-per-turn.ts [perdure|dbos] [sessions] [turns]
 *   node bench/peers-agents/cpu-per-turn.ts perdure-sqlite [sessions] [turns]   # SQLite process-crash-safe, no cluster
 *   node bench/peers-agents/cpu-per-turn.ts perdure-sqlite-full [sessions] [turns]   # SQLite full (an fsync a commit)
 *
 * The cluster's CPU is read from /proc for the postmaster (from
 * `postmaster.pid`) and its children, so the cluster must run on this
 * machine and serve nothing else meanwhile. With PERDURE_BENCH_CPU_PROFILE=FILE
 * it writes a V8 CPU profile of the measured turns only (not the warm-up)
 * to FILE; `node bench/engine/cpuprofile-summary.ts FILE --per=TURNS` sums it.
 * PERDURE_BENCH_HEAP_PROFILE=FILE writes a sampling heap profile of the same
 * turns that counts every allocation, the collected ones too (what the
 * garbage collector works through).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { openPerdureAgentPostgres, openPerdureAgentSqlite, type PerdureAgentSystem } from "./perdure-agent.ts";
import { measureSessionsThroughput, type AgentTurnSystem } from "./turn-workload.ts";

const [systemName = "perdure", sessionsText = "16", turnsText = "10"] = process.argv.slice(2);
if (systemName !== "perdure" && systemName !== "dbos" && systemName !== "perdure-sqlite" && systemName !== "perdure-sqlite-full") {
  throw new Error(`unknown system ${systemName}: use perdure, dbos, perdure-sqlite or perdure-sqlite-full`);
}
const onPostgres = !systemName.startsWith("perdure-sqlite");
const url = process.env["PERDURE_TEST_DATABASE_URL"];
const folder = process.env["PERDURE_TEST_POSTGRES_DIR"];
if (onPostgres && (url === undefined || folder === undefined)) throw new Error("set PERDURE_TEST_DATABASE_URL and PERDURE_TEST_POSTGRES_DIR (scripts/start-test-postgres.sh prints both)");
const sessions = Number(sessionsText);
const turns = Number(turnsText);
if (!Number.isSafeInteger(sessions) || sessions <= 0 || !Number.isSafeInteger(turns) || turns <= 0) throw new Error(`sessions ${sessionsText} and turns ${turnsText} must be positive integers`);

const clockTicksPerSecond = 100;
const postmaster = onPostgres ? Number(readFileSync(join(folder!, "data", "postmaster.pid"), "utf8").split("\n")[0]) : 0;

/** User plus system CPU in ms of a process, from /proc/<pid>/stat; 0 when it is gone. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
  } catch {
    return 0;
  }
}

/** Bytes this process read and wrote through system calls (`rchar`, `wchar` of /proc/self/io): on PostgreSQL, mostly its sockets to the server. */
function processIo(): { read: number; written: number } {
  const fields = new Map(readFileSync("/proc/self/io", "utf8").trim().split("\n").map((line) => line.split(": ") as [string, string]));
  return { read: Number(fields.get("rchar")), written: Number(fields.get("wchar")) };
}

/** CPU ms of the postmaster and its live children (a child that exited meanwhile is not counted). */
function clusterCpuMs(): number {
  if (!onPostgres) return 0;
  let total = processCpuMs(postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      if (parent === postmaster) total += processCpuMs(Number(entry));
    } catch {
      // Gone while listing.
    }
  }
  return total;
}

const system: AgentTurnSystem = systemName === "dbos" ? await (await import("./dbos-agent.ts")).openDbosAgent(url!, 20)
  : systemName === "perdure-sqlite" ? await openPerdureAgentSqlite("process-crash-safe", 16)
  : systemName === "perdure-sqlite-full" ? await openPerdureAgentSqlite("full", 16) : await openPerdureAgentPostgres(url!, 16);
try {
  // Warm-up: pooled connections prepare their statements, V8 compiles the hot paths.
  await measureSessionsThroughput(system, 4, 5);
  const profileFile = process.env["PERDURE_BENCH_CPU_PROFILE"];
  const profiler = profileFile === undefined ? undefined : new Session();
  if (profiler !== undefined) {
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
  }
  const heapProfileFile = process.env["PERDURE_BENCH_HEAP_PROFILE"];
  const heapProfiler = heapProfileFile === undefined ? undefined : new Session();
  if (heapProfiler !== undefined) {
    heapProfiler.connect();
    await heapProfiler.post("HeapProfiler.enable");
    await heapProfiler.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const readsBefore = "confirmReads" in system ? (system as PerdureAgentSystem).confirmReads : 0;
  // The cluster's CPU is read outside this process's measured span: reading it scans /proc, tens of ms on a busy machine.
  const clusterBefore = clusterCpuMs();
  const ioBefore = processIo();
  const ownBefore = process.cpuUsage();
  const rate = await measureSessionsThroughput(system, sessions, turns);
  const own = process.cpuUsage(ownBefore);
  const cluster = clusterCpuMs() - clusterBefore;
  const ioAfter = processIo();
  if (heapProfiler !== undefined) {
    const { profile } = await heapProfiler.post("HeapProfiler.stopSampling");
    writeFileSync(heapProfileFile!, JSON.stringify(profile));
    heapProfiler.disconnect();
  }
  if (profiler !== undefined) {
    const { profile } = await profiler.post("Profiler.stop");
    writeFileSync(profileFile!, JSON.stringify(profile));
    profiler.disconnect();
  }
  const count = sessions * turns;
  const io = `; KB per turn read / written by this process: ${((ioAfter.read - ioBefore.read) / 1024 / count).toFixed(1)} / ${((ioAfter.written - ioBefore.written) / 1024 / count).toFixed(1)}`;
  const reads = "confirmReads" in system ? `; the Client's reads of AgentState per turn: ${(((system as PerdureAgentSystem).confirmReads - readsBefore) / count).toFixed(2)}` : "";
  console.log(`${system.name}: ${rate.toFixed(1)} turns/s at ${sessions} sessions; CPU per turn: this process ${((own.user + own.system) / 1000 / count).toFixed(2)} ms${onPostgres ? `, PostgreSQL ${(cluster / count).toFixed(2)} ms` : ""}${reads}${io}`);
} finally {
  await system.close();
}
