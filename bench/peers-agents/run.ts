/**
 * An agent turn on Perdure side by side with DBOS, in one process run,
 * interleaved round by round so that a noisy stretch of the machine hits
 * every system alike (issue 40's workload, see turn-workload.ts): p50/p99
 * per turn over 20-turn sessions one at a time, then turns/s with 16
 * sessions at once. From the repo root:
 *
 *   npm run bench:peers-agents
 *   npm run bench:peers-agents -- --quick
 *   npm run bench:peers-agents -- --systems=perdure-postgres,dbos --rounds=5
 *
 * PostgreSQL is a private cluster the bench starts and stops itself
 * (scripts/start-test-postgres.sh), unless PERDURE_BENCH_DATABASE_URL names
 * a server. Perdure's statements, round trips and store transactions per
 * turn are counted after the timed rounds. Prints per-round ratios and
 * writes bench/results/peers-agents-latest.json.
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
import { measureTurnRound, timeOneSession, type AgentTurnSystem, type TurnRound, type TurnSettings } from "./turn-workload.ts";

interface SystemEntry {
  key: string;
  open(postgres: () => BenchPostgres): Promise<AgentTurnSystem>;
}

const sessionCounts = [16] as const;
const concurrency = 16;
const systems: readonly SystemEntry[] = [
  { key: "perdure-postgres", open: (postgres) => openPerdureAgentPostgres(postgres().connectionString, concurrency) },
  { key: "perdure-sqlite-full", open: () => openPerdureAgentSqlite("full", concurrency) },
  { key: "perdure-sqlite-normal", open: () => openPerdureAgentSqlite("process-crash-safe", concurrency) },
  // Loaded only when selected: DBOS registers its workflows at import.
  { key: "dbos", open: async (postgres) => (await import("./dbos-agent.ts")).openDbosAgent(postgres().connectionString, 20) },
];

const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, systems: { type: "string" }, rounds: { type: "string" }, out: { type: "string" } } });
const quick = values.quick || process.env["npm_config_quick"] === "true";
const wanted = values.systems?.split(",").map((key) => key.trim()).filter((key) => key.length > 0);
const selected = wanted === undefined ? systems : systems.filter((entry) => wanted.includes(entry.key));
if (selected.length === 0) throw new Error(`--systems=${values.systems ?? ""} matches no system; known: ${systems.map((entry) => entry.key).join(", ")}`);
const rounds = Number(values.rounds ?? (quick ? 1 : 3));
if (!Number.isSafeInteger(rounds) || rounds <= 0) throw new Error(`--rounds=${values.rounds ?? ""} is invalid: use a positive integer`);
const settings: TurnSettings = { turnsPerSession: 20, latencySessions: quick ? 1 : 3, sessionCounts };

let postgres: BenchPostgres | undefined;
const postgresOnce = (): BenchPostgres => (postgres ??= startBenchPostgres());
const opened = new Map<string, AgentTurnSystem>();
const names = new Map<string, string>();
const roundsBySystem = new Map<string, TurnRound[]>();
const countsBySystem = new Map<string, { statements: number; roundTrips: number; transactions: number; confirmReads: number }>();
const machine = describeMachine();
const revision = describeEngineRevision(resolve(benchDirectory, ".."), ["packages/engine", "packages/agents"]);
console.log(`Agent turn, Perdure and peers: ${revision?.commit.slice(0, 7) ?? "unknown"}${revision?.packagesDirty === true ? " + uncommitted changes" : ""}; ${machine.nproc} cores, Node ${machine.node}, load average ${loadavg().map((load) => load.toFixed(2)).join(" ")}`);

try {
  for (const entry of selected) {
    process.stdout.write(`  opening ${entry.key} ... `);
    const system = await entry.open(postgresOnce);
    // Warm-up: pooled connections prepare their statements, V8 compiles the hot paths.
    await measureTurnRound(system, { turnsPerSession: 5, latencySessions: 1, sessionCounts });
    opened.set(entry.key, system);
    names.set(entry.key, system.name);
    console.log(system.name);
  }
  for (let round = 1; round <= rounds; round++) {
    for (const entry of selected) {
      const system = opened.get(entry.key)!;
      process.stdout.write(`  round ${round}/${rounds} ${entry.key} ... `);
      const result = await measureTurnRound(system, settings);
      (roundsBySystem.get(entry.key) ?? roundsBySystem.set(entry.key, []).get(entry.key)!).push(result);
      console.log(`p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ${sessionCounts.map((sessions) => `${(result.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN).toFixed(1)} turns/s at ${sessions} sessions`).join(", ")}; load ${loadavg()[0]?.toFixed(2)}`);
    }
  }
  // Counted after the timed rounds, so the counting wrappers cost the timings nothing; the peers are
  // closed first, since the counters wrap this process's driver and would count their statements too.
  for (const entry of selected) {
    if (entry.key.startsWith("perdure")) continue;
    await opened.get(entry.key)?.close();
    opened.delete(entry.key);
  }
  installStatementCounters();
  for (const entry of selected) {
    const system = opened.get(entry.key) as PerdureAgentSystem;
    if (!entry.key.startsWith("perdure")) continue;
    const before = readStatementCounts();
    const readsBefore = system.confirmReads;
    const turns = settings.turnsPerSession;
    const counted = await countTransactions(system.store, () => timeOneSession(system, turns));
    const counts = countsBetween(before, readStatementCounts());
    countsBySystem.set(entry.key, {
      statements: (counts.statements + counts.controlStatements) / turns,
      roundTrips: counts.roundTrips / turns,
      transactions: counted.transactions / turns,
      confirmReads: (system.confirmReads - readsBefore) / turns,
    });
  }
} finally {
  for (const system of opened.values()) await system.close().catch((error: unknown) => console.error(error));
  postgres?.stop();
}

const summaries = selected.flatMap((entry) => {
  const measured = roundsBySystem.get(entry.key) ?? [];
  if (measured.length === 0) return [];
  return [{
    key: entry.key,
    name: names.get(entry.key) ?? entry.key,
    p50Ms: median(measured.map((round) => round.p50Ms)),
    p99Ms: median(measured.map((round) => round.p99Ms)),
    turnsPerSecondBySessions: Object.fromEntries(sessionCounts.map((sessions) => [String(sessions), median(measured.map((round) => round.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN))])),
    counts: countsBySystem.get(entry.key),
    rounds: measured,
  }];
});
console.log("");
for (const summary of summaries) {
  const counts = summary.counts === undefined ? "" : `; per turn ${summary.counts.statements.toFixed(1)} statements, ${summary.counts.roundTrips.toFixed(1)} round trips, ${summary.counts.transactions.toFixed(1)} store transactions besides one-request statements, ${summary.counts.confirmReads.toFixed(1)} Client reads of AgentState to see the turn end`;
  console.log(`${summary.name}: p50 ${summary.p50Ms.toFixed(2)} ms, p99 ${summary.p99Ms.toFixed(2)} ms, ${sessionCounts.map((sessions) => `${(summary.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN).toFixed(1)} turns/s at ${sessions}`).join(", ")}${counts}`);
}
const peer = summaries.find((summary) => summary.key === "dbos");
const ratios = peer === undefined ? [] : summaries.filter((summary) => summary.key !== "dbos").map((summary) => ({
  perdure: summary.name,
  peer: peer.name,
  // Per round, Perdure's round against the peer's round of the same pass.
  p50ByRound: summary.rounds.map((round, index) => round.p50Ms / (peer.rounds[index]?.p50Ms ?? Number.NaN)),
  turnsPerSecondByRound: summary.rounds.map((round, index) => Object.fromEntries(sessionCounts.map((sessions) => [String(sessions), (round.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN) / (peer.rounds[index]?.turnsPerSecondBySessions[String(sessions)] ?? Number.NaN)]))),
}));
if (ratios.length > 0) {
  console.log(`\nratios per round (Perdure / ${peer?.name ?? ""}): p50 per turn (lower is better); turns/s at ${sessionCounts.join(", ")} sessions (higher is better)`);
  for (const ratio of ratios) {
    console.log(`  ${ratio.perdure}: p50 ${ratio.p50ByRound.map((value) => `${value.toFixed(2)}x`).join(" / ")}; turns/s ${ratio.turnsPerSecondByRound.map((byCount) => sessionCounts.map((sessions) => `${(byCount[String(sessions)] ?? Number.NaN).toFixed(2)}x`).join(" ")).join(" / ")}`);
  }
}
const outputPath = resolve(benchDirectory, values.out ?? "results/peers-agents-latest.json");
mkdirSync(dirname(outputPath), { recursive: true });
writeFileSync(outputPath, `${JSON.stringify({ generatedAt: new Date().toISOString(), quick, rounds, settings, engineRevision: revision ?? null, machine: { ...machine, loadAverageAtEnd: loadavg() }, summaries, ratios }, null, 2)}\n`);
console.log(`\nJSON in ${outputPath}`);
