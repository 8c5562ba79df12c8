/**
 * An agent turn on Perdure side by side with its peers, in one process run,
 * interleaved round by round so that a noisy stretch of the machine hits
 * every system alike (issue 40's workload, see turn-workload.ts): Perdure on
 * its three stores; LangGraph JS with its PostgreSQL and SQLite checkpointers
 * (and without one, the graph's own cost); Mastra with its PostgreSQL and
 * LibSQL storage; an agent loop on DBOS and on Restate, each written as its
 * own docs write one. For a 0 ms and a 50 ms model: p50/p99 per turn over
 * sessions one at a time, then turns/s with 1 and 16 sessions at once. From
 * the repo root:
 *
 *   npm run bench:peers-agents
 *   npm run bench:peers-agents -- --quick
 *   npm run bench:peers-agents -- --systems=perdure-postgres,dbos --rounds=5 --model-ms=0
 *
 * PostgreSQL is a private cluster the bench starts and stops itself
 * (scripts/start-test-postgres.sh), unless PERDURE_BENCH_DATABASE_URL names
 * a server; Restate's server is the npm package's binary, started on
 * loopback. After the timed rounds (0 ms model) it counts, per turn of one
 * session: write transactions and WAL bytes on PostgreSQL (the server's
 * transaction IDs and WAL position, so they count what each system really
 * commits), Perdure's statements, round trips and store transactions, and
 * the bytes each system's store holds at the end over the turns it took.
 * Memory is this process's RSS after each system's round (every system runs
 * in this process; Restate's server is a process of its own and not in it).
 * Prints per-round ratios and writes bench/results/peers-agents-latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { countTransactions } from "../agents/session-bench.ts";
import { benchDirectory } from "../engine/cli.ts";
import { countsBetween, installStatementCounters, readStatementCounts } from "../engine/statement-counter.ts";
import { describeEngineRevision, describeMachine, median } from "../engine/support.ts";
import { startBenchPostgres, type BenchPostgres } from "../peers/bench-postgres.ts";
import { openPerdureAgentPostgres, openPerdureAgentSqlite, type PerdureAgentSystem } from "./perdure-agent.ts";
import { setModelDelayMs } from "./scripted-turn.ts";
import { withClient } from "./store-bytes.ts";
import { measureTurnRound, timeOneSession, type AgentTurnSystem, type TurnRound, type TurnSettings } from "./turn-workload.ts";

/** The class of durability a system's store gives a committed call: ratios pair Perdure with peers of its class. */
type StoreClass = "postgres" | "fsync" | "process-crash-safe" | "none";

interface SystemEntry {
  key: string;
  storeClass: StoreClass;
  open(postgres: () => BenchPostgres): Promise<AgentTurnSystem>;
}

const concurrency = 16;
// Peers are loaded only when selected: DBOS registers its workflows at import, and each pulls in its own framework.
const systems: readonly SystemEntry[] = [
  { key: "perdure-postgres", storeClass: "postgres", open: (postgres) => openPerdureAgentPostgres(postgres().connectionString, concurrency) },
  { key: "perdure-sqlite-full", storeClass: "fsync", open: () => openPerdureAgentSqlite("full", concurrency) },
  { key: "perdure-sqlite-normal", storeClass: "process-crash-safe", open: () => openPerdureAgentSqlite("process-crash-safe", concurrency) },
  { key: "dbos", storeClass: "postgres", open: async (postgres) => (await import("./dbos-agent.ts")).openDbosAgent(postgres().connectionString, 20) },
  { key: "langgraph-postgres", storeClass: "postgres", open: async (postgres) => (await import("./langgraph-agent.ts")).openLangGraphPostgres(postgres().connectionString) },
  { key: "mastra-postgres", storeClass: "postgres", open: async (postgres) => (await import("./mastra-agent.ts")).openMastraPostgres(postgres().connectionString) },
  { key: "restate", storeClass: "fsync", open: async () => (await import("./restate-agent.ts")).openRestateAgent() },
  { key: "langgraph-sqlite-full", storeClass: "fsync", open: async () => (await import("./langgraph-agent.ts")).openLangGraphSqlite("full") },
  { key: "langgraph-sqlite-default", storeClass: "process-crash-safe", open: async () => (await import("./langgraph-agent.ts")).openLangGraphSqlite("default") },
  { key: "mastra-libsql", storeClass: "process-crash-safe", open: async () => (await import("./mastra-agent.ts")).openMastraLibsql() },
  { key: "langgraph-none", storeClass: "none", open: async () => (await import("./langgraph-agent.ts")).openLangGraphInMemory() },
];

const { values } = parseArgs({ options: {
  quick: { type: "boolean", default: false },
  systems: { type: "string" },
  rounds: { type: "string" },
  turns: { type: "string" },
  "model-ms": { type: "string" },
  out: { type: "string" },
} });
const quick = values.quick || process.env["npm_config_quick"] === "true";
const wanted = values.systems?.split(",").map((key) => key.trim()).filter((key) => key.length > 0);
const unknown = wanted?.filter((key) => !systems.some((entry) => entry.key === key)) ?? [];
if (unknown.length > 0) throw new Error(`--systems names unknown systems ${unknown.join(", ")}; known: ${systems.map((entry) => entry.key).join(", ")}`);
const selected = wanted === undefined ? systems : systems.filter((entry) => wanted.includes(entry.key));
if (selected.length === 0) throw new Error(`--systems=${values.systems ?? ""} matches no system; known: ${systems.map((entry) => entry.key).join(", ")}`);
const rounds = Number(values.rounds ?? (quick ? 1 : 3));
if (!Number.isSafeInteger(rounds) || rounds <= 0) throw new Error(`--rounds=${values.rounds ?? ""} is invalid: use a positive integer`);
const turnsPerSession = Number(values.turns ?? (quick ? 10 : 20));
if (!Number.isSafeInteger(turnsPerSession) || turnsPerSession <= 0) throw new Error(`--turns=${values.turns ?? ""} is invalid: use a positive integer`);
const modelDelays = (values["model-ms"] ?? "0,50").split(",").map((text) => Number(text.trim()));
if (modelDelays.some((delay) => !Number.isSafeInteger(delay) || delay < 0)) throw new Error(`--model-ms=${values["model-ms"] ?? ""} is invalid: use milliseconds such as 0,50`);
const sessionCounts = [1, 16] as const;
const settings: TurnSettings = { turnsPerSession, latencySessions: quick ? 1 : 3, sessionCounts };

interface MeasuredRound extends TurnRound {
  loadAverage: number;
  rssMiB: number;
}
interface StoreCounts {
  /** PostgreSQL systems: transactions that wrote (took a transaction ID) and WAL bytes, per turn. */
  writeTransactions?: number;
  walBytes?: number;
  /** Perdure: statements, round trips and store transactions per turn, as its drivers count them. */
  statements?: number;
  roundTrips?: number;
  storeTransactions?: number;
  confirmReads?: number;
  /** On disk at the end, over every turn the system took in this run. */
  bytesPerTurn?: number;
}

let postgres: BenchPostgres | undefined;
const postgresOnce = (): BenchPostgres => (postgres ??= startBenchPostgres());
const opened = new Map<string, AgentTurnSystem>();
const names = new Map<string, string>();
const turnsTaken = new Map<string, number>();
const roundsByDelay = new Map<number, Map<string, MeasuredRound[]>>();
const countsBySystem = new Map<string, StoreCounts>();
const machine = describeMachine();
const revision = describeEngineRevision(resolve(benchDirectory, ".."), ["packages/engine", "packages/agents"]);
console.log(`Agent turn, Perdure and peers: ${revision?.commit.slice(0, 7) ?? "unknown"}${revision?.packagesDirty === true ? " + uncommitted changes" : ""}; ${machine.nproc} cores, Node ${machine.node}, load average ${loadavg().map((load) => load.toFixed(2)).join(" ")}`);

const turnsOfRound = (): number => settings.turnsPerSession * (settings.latencySessions + sessionCounts.reduce((sum, count) => sum + count, 0));

/** The server's transaction ID counter and WAL position: what every system's commits advance. */
async function serverPosition(connectionString: string): Promise<{ xid: bigint; wal: bigint }> {
  return withClient(connectionString, async (client) => {
    const result = await client.query<{ xid: string; wal: string }>("SELECT txid_snapshot_xmax(txid_current_snapshot())::text AS xid, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal");
    const row = result.rows[0]!;
    return { xid: BigInt(row.xid), wal: BigInt(row.wal) };
  });
}

try {
  for (const entry of selected) {
    process.stdout.write(`  opening ${entry.key} ... `);
    const system = await entry.open(postgresOnce);
    // Warm-up: pooled connections prepare their statements, V8 compiles the hot paths.
    await measureTurnRound(system, { turnsPerSession: 5, latencySessions: 1, sessionCounts: [4] });
    turnsTaken.set(entry.key, 25);
    opened.set(entry.key, system);
    names.set(entry.key, system.name);
    console.log(system.name);
  }
  for (const delay of modelDelays) {
    setModelDelayMs(delay);
    const byKey = new Map<string, MeasuredRound[]>();
    roundsByDelay.set(delay, byKey);
    for (let round = 1; round <= rounds; round++) {
      for (const entry of selected) {
        const system = opened.get(entry.key)!;
        process.stdout.write(`  ${delay} ms model, round ${round}/${rounds} ${entry.key} ... `);
        const result = await measureTurnRound(system, settings);
        turnsTaken.set(entry.key, (turnsTaken.get(entry.key) ?? 0) + turnsOfRound());
        const measured = { ...result, loadAverage: loadavg()[0] ?? Number.NaN, rssMiB: process.memoryUsage().rss / 2 ** 20 };
        (byKey.get(entry.key) ?? byKey.set(entry.key, []).get(entry.key)!).push(measured);
        console.log(`p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ${sessionCounts.map((sessions) => `${(result.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN).toFixed(1)} turns/s at ${sessions}`).join(", ")}; RSS ${measured.rssMiB.toFixed(0)} MiB; load ${measured.loadAverage.toFixed(2)}`);
      }
    }
  }
  setModelDelayMs(0);
  // Bytes stored, over every turn taken so far.
  for (const entry of selected) {
    const system = opened.get(entry.key)!;
    if (system.bytesStored === undefined) continue;
    countsBySystem.set(entry.key, { bytesPerTurn: (await system.bytesStored()) / (turnsTaken.get(entry.key) ?? 1) });
  }
  // Counted after the timed rounds, one system at a time on one session, so the counting costs the timings nothing.
  const turns = settings.turnsPerSession;
  for (const entry of selected) {
    if (entry.storeClass !== "postgres" || postgres === undefined) continue;
    const system = opened.get(entry.key)!;
    const before = await serverPosition(postgres.connectionString);
    await timeOneSession(system, turns);
    const after = await serverPosition(postgres.connectionString);
    const counts = countsBySystem.get(entry.key) ?? {};
    // Minus the one transaction ID the reading itself does not take (txid_current_snapshot takes none).
    countsBySystem.set(entry.key, { ...counts, writeTransactions: Number(after.xid - before.xid) / turns, walBytes: Number(after.wal - before.wal) / turns });
  }
  // The statement counters wrap this process's pg driver, so the peers are closed first.
  for (const entry of selected) {
    if (entry.key.startsWith("perdure")) continue;
    await opened.get(entry.key)?.close();
    opened.delete(entry.key);
  }
  installStatementCounters();
  for (const entry of selected) {
    if (!entry.key.startsWith("perdure")) continue;
    const system = opened.get(entry.key) as PerdureAgentSystem;
    const before = readStatementCounts();
    const readsBefore = system.confirmReads;
    const counted = await countTransactions(system.store, () => timeOneSession(system, turns));
    const counts = countsBetween(before, readStatementCounts());
    countsBySystem.set(entry.key, {
      ...countsBySystem.get(entry.key),
      ...(entry.storeClass === "postgres" ? { statements: (counts.statements + counts.controlStatements) / turns, roundTrips: counts.roundTrips / turns } : {}),
      storeTransactions: counted.transactions / turns,
      confirmReads: (system.confirmReads - readsBefore) / turns,
    });
  }
} finally {
  for (const system of opened.values()) await system.close().catch((error: unknown) => console.error(error));
  postgres?.stop();
}

/** A package's version from its package.json, found by walking up from its entry point (some export no `./package.json`). */
async function packageVersion(name: string): Promise<string> {
  const { createRequire } = await import("node:module");
  const { existsSync, readFileSync } = await import("node:fs");
  const require = createRequire(import.meta.url);
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    let folder = dirname(require.resolve(name));
    for (;;) {
      const candidate = resolve(folder, "package.json");
      if (existsSync(candidate)) {
        const manifest = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
        if (manifest.name === name && manifest.version !== undefined) return manifest.version;
      }
      if (dirname(folder) === folder) return "not found";
      folder = dirname(folder);
    }
  }
}

const versions = Object.fromEntries(await Promise.all([
  "@dbos-inc/dbos-sdk", "@langchain/langgraph", "@langchain/core", "@langchain/langgraph-checkpoint-sqlite", "@langchain/langgraph-checkpoint-postgres",
  "@mastra/core", "@mastra/memory", "@mastra/libsql", "@mastra/pg", "ai", "@restatedev/restate-server", "@restatedev/restate-sdk",
].map(async (name) => [name, await packageVersion(name).catch(() => "not installed")] as const)));

const perDelay = modelDelays.map((delay) => {
  const byKey = roundsByDelay.get(delay) ?? new Map<string, MeasuredRound[]>();
  const summaries = selected.flatMap((entry) => {
    const measured = byKey.get(entry.key) ?? [];
    if (measured.length === 0) return [];
    return [{
      key: entry.key,
      storeClass: entry.storeClass,
      name: names.get(entry.key) ?? entry.key,
      p50Ms: median(measured.map((round) => round.p50Ms)),
      p99Ms: median(measured.map((round) => round.p99Ms)),
      turnsPerSecondBySessions: Object.fromEntries(sessionCounts.map((sessions) => [String(sessions), median(measured.map((round) => round.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN))])),
      rssMiB: Math.max(...measured.map((round) => round.rssMiB)),
      counts: countsBySystem.get(entry.key),
      rounds: measured,
    }];
  });
  // Per round, each Perdure store against each peer on a store of its class (and against LangGraph without a checkpointer).
  const ratios = summaries.filter((summary) => summary.key.startsWith("perdure")).flatMap((ours) => summaries
    .filter((peer) => !peer.key.startsWith("perdure") && (peer.storeClass === ours.storeClass || peer.storeClass === "none"))
    .map((peer) => ({
      perdure: ours.name,
      peer: peer.name,
      p50ByRound: ours.rounds.map((round, index) => round.p50Ms / (peer.rounds[index]?.p50Ms ?? Number.NaN)),
      turnsPerSecondByRound: ours.rounds.map((round, index) => Object.fromEntries(sessionCounts.map((sessions) => [String(sessions), (round.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN) / (peer.rounds[index]?.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN)]))),
      loadByRound: ours.rounds.map((round, index) => [round.loadAverage, peer.rounds[index]?.loadAverage ?? Number.NaN]),
    })));
  return { modelMs: delay, summaries, ratios };
});

const format = (value: number | undefined, digits = 1): string => (value === undefined || !Number.isFinite(value) ? "-" : value.toFixed(digits));
for (const { modelMs, summaries, ratios } of perDelay) {
  console.log(`\n${modelMs} ms model`);
  for (const summary of summaries) {
    const counts = summary.counts;
    const stored = counts === undefined ? "" : `; per turn ${[
      counts.writeTransactions === undefined ? "" : `${format(counts.writeTransactions)} write transactions, ${format((counts.walBytes ?? Number.NaN) / 1024)} KB WAL`,
      counts.storeTransactions === undefined ? "" : `${format(counts.storeTransactions)} store transactions besides one-request statements`,
      counts.statements === undefined ? "" : `${format(counts.statements)} statements, ${format(counts.roundTrips)} round trips`,
      counts.bytesPerTurn === undefined ? "" : `${format(counts.bytesPerTurn / 1024)} KB stored`,
    ].filter((part) => part !== "").join(", ")}`;
    console.log(`  ${summary.name}: p50 ${format(summary.p50Ms, 2)} ms, p99 ${format(summary.p99Ms, 2)} ms, ${sessionCounts.map((sessions) => `${format(summary.turnsPerSecondBySessions[String(sessions)])} turns/s at ${sessions}`).join(", ")}, RSS ${format(summary.rssMiB, 0)} MiB${stored}`);
  }
  if (ratios.length > 0) console.log(`  ratios per round (Perdure / peer): p50 per turn (lower is better); turns/s at ${sessionCounts.join(" and ")} sessions (higher is better); load`);
  for (const ratio of ratios) {
    console.log(`    ${ratio.perdure} / ${ratio.peer}: p50 ${ratio.p50ByRound.map((value) => `${format(value, 2)}x`).join(" / ")}; turns/s ${ratio.turnsPerSecondByRound.map((byCount) => sessionCounts.map((sessions) => `${format(byCount[String(sessions)], 2)}x`).join(" ")).join(" / ")}; load ${ratio.loadByRound.map(([ours, theirs]) => `${format(ours)}/${format(theirs)}`).join(" ")}`);
  }
}
console.log(`\nversions: ${Object.entries(versions).map(([name, version]) => `${name} ${version}`).join(", ")}`);
const outputPath = resolve(benchDirectory, values.out ?? "results/peers-agents-latest.json");
mkdirSync(dirname(outputPath), { recursive: true });
writeFileSync(outputPath, `${JSON.stringify({ generatedAt: new Date().toISOString(), quick, rounds, settings, modelDelays, versions, engineRevision: revision ?? null, machine: { ...machine, loadAverageAtEnd: loadavg() }, perDelay }, null, 2)}\n`);
console.log(`\nJSON in ${outputPath}`);
