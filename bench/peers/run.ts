/**
 * Perdure side by side with other durable-execution systems, in one process
 * run, interleaved round by round so that a noisy stretch of the machine
 * hits every system alike: flows of 0, 3 and 10 no-op Steps one at a time,
 * then 16 and 64 concurrent callers. From the repo root:
 *
 *   npm run bench:peers                       # every system, a few minutes
 *   npm run bench:peers -- --quick            # fewer flows per round
 *   npm run bench:peers -- --systems=perdure-postgres,dbos,restate
 *   PERDURE_BENCH_BASELINE=/path/to/other/checkout npm run bench:peers   # adds "Perdure before" rows
 *
 * PostgreSQL is a private cluster the bench starts and stops itself
 * (scripts/start-test-postgres.sh), unless PERDURE_BENCH_DATABASE_URL names
 * a server. Prints a table with ratios and writes bench/results/peers-latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { benchDirectory } from "../engine/cli.ts";
import { countsBetween, installStatementCounters, readStatementCounts, type StatementCounts } from "../engine/statement-counter.ts";
import { describeEngineRevision, describeMachine, median } from "../engine/support.ts";
import { baselineSystems } from "./baseline-systems.ts";
import { startBenchPostgres, type BenchPostgres } from "./bench-postgres.ts";
import { peerSystems } from "./peer-systems.ts";
import { openPerdurePostgres, openPerdureSqlite } from "./perdure-systems.ts";
import { measureLatency, measureRound, measureThroughput, type WorkloadRound, type WorkloadSettings, type WorkloadSystem } from "./workload.ts";

/** A system the bench can run, opened once and measured every round. */
export interface SystemEntry {
  key: string;
  /** Whether its statements are counted (Perdure only: the counters wrap this process's drivers). */
  counted: boolean;
  open(context: { postgres: () => BenchPostgres }): Promise<WorkloadSystem>;
}

/** Concurrent callers of the throughput part; Perdure's Workers run as many Steps at once as the most callers. */
const callerCounts = [16, 64] as const;
const concurrency = Math.max(...callerCounts);

const perdureSystems: readonly SystemEntry[] = [
  { key: "perdure-postgres", counted: true, open: ({ postgres }) => openPerdurePostgres(postgres().connectionString, { concurrency }) },
  { key: "perdure-postgres-general", counted: true, open: ({ postgres }) => openPerdurePostgres(postgres().connectionString, { concurrency, oneRequestCommits: false }) },
  { key: "perdure-sqlite-full", counted: true, open: () => openPerdureSqlite("full", { concurrency }) },
  { key: "perdure-sqlite-normal", counted: true, open: () => openPerdureSqlite("process-crash-safe", { concurrency }) },
];

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    systems: { type: "string" },
    rounds: { type: "string" },
    out: { type: "string" },
  },
});
const quick = values.quick || process.env["npm_config_quick"] === "true";
const allSystems = [...perdureSystems, ...baselineSystems(), ...peerSystems];
const wanted = values.systems?.split(",").map((key) => key.trim()).filter((key) => key.length > 0);
const selected = wanted === undefined ? allSystems : allSystems.filter((entry) => wanted.includes(entry.key));
if (selected.length === 0) throw new Error(`--systems=${values.systems ?? ""} matches no system; known: ${allSystems.map((entry) => entry.key).join(", ")}`);
const rounds = Number(values.rounds ?? (quick ? 1 : 3));
if (!Number.isSafeInteger(rounds) || rounds <= 0) throw new Error(`--rounds=${values.rounds ?? ""} is invalid: use a positive integer`);
const settings: WorkloadSettings = {
  stepCounts: [0, 3, 10],
  flowsPerCount: quick ? 20 : 60,
  callers: callerCounts,
  throughputSteps: 10,
  // About 6,400 Steps per caller count (2,560 with --quick).
  flowsPerCaller: (callers) => (quick ? Math.max(4, Math.round(256 / callers)) : Math.max(6, Math.round(640 / callers))),
};

let postgres: BenchPostgres | undefined;
const postgresOnce = (): BenchPostgres => (postgres ??= startBenchPostgres());
const opened = new Map<string, WorkloadSystem>();
const roundsBySystem = new Map<string, WorkloadRound[]>();
const countsBySystem = new Map<string, { perStep: StatementCounts; perZeroStepFlow: StatementCounts }>();
const failures: { system: string; error: string }[] = [];
const machine = describeMachine();
const revision = describeEngineRevision(resolve(benchDirectory, ".."), ["packages/engine"]);
console.log(`Perdure and peers: engine ${revision?.commit.slice(0, 7) ?? "unknown"}${revision?.packagesDirty === true ? " + uncommitted changes" : ""}; ${machine.nproc} cores, Node ${machine.node}, load average ${loadavg().map((load) => load.toFixed(2)).join(" ")}`);

async function countStatements(system: WorkloadSystem): Promise<{ perStep: StatementCounts; perZeroStepFlow: StatementCounts }> {
  const flows = 20;
  const zeroBefore = readStatementCounts();
  await measureLatency(system, { ...settings, stepCounts: [0], flowsPerCount: flows });
  const zero = countsBetween(zeroBefore, readStatementCounts());
  const tenBefore = readStatementCounts();
  await measureLatency(system, { ...settings, stepCounts: [10], flowsPerCount: flows });
  const ten = countsBetween(tenBefore, readStatementCounts());
  const per = (counts: StatementCounts, divisor: number): StatementCounts => ({
    statements: counts.statements / divisor,
    roundTrips: counts.roundTrips / divisor,
    controlStatements: counts.controlStatements / divisor,
  });
  return { perStep: per(countsBetween(zero, ten), flows * 10), perZeroStepFlow: per(zero, flows) };
}

try {
  for (const entry of selected) {
    process.stdout.write(`  opening ${entry.key} ... `);
    try {
      const system = await entry.open({ postgres: postgresOnce });
      // Warm-up, one unrecorded round: every pooled connection prepares its statements and
      // PostgreSQL plans the functions' statements (the first five calls on a connection plan
      // afresh), and V8 compiles the hot paths. A Worker meets this once, after its start.
      for (const callers of callerCounts) await measureThroughput(system, callers, 3, 2);
      await measureRound(system, settings);
      opened.set(entry.key, system);
      console.log(system.name);
    } catch (error) {
      console.log("FAILED");
      console.error(error);
      failures.push({ system: entry.key, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }
  for (let round = 1; round <= rounds; round++) {
    for (const entry of selected) {
      const system = opened.get(entry.key);
      if (system === undefined) continue;
      process.stdout.write(`  round ${round}/${rounds} ${entry.key} ... `);
      let result: WorkloadRound;
      try {
        result = await measureRound(system, settings);
      } catch (error) {
        // One system failing (a connection timeout on a loaded machine) leaves the others to finish.
        console.log("FAILED");
        console.error(error);
        failures.push({ system: entry.key, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        opened.delete(entry.key);
        await system.close().catch((closeError: unknown) => console.error(closeError));
        continue;
      }
      (roundsBySystem.get(entry.key) ?? roundsBySystem.set(entry.key, []).get(entry.key)!).push(result);
      const throughput = callerCounts.map((callers) => `${Math.round(result.stepsPerSecondByCallers[String(callers)] ?? Number.NaN)} Steps/s at ${callers}`).join(", ");
      console.log(`${result.msPerStep.toFixed(3)} ms/Step, ${throughput}, 0-Step flow ${result.flowMsBySteps["0"]?.toFixed(2)} ms`);
    }
  }
  // Counted after the timed rounds, so that the counting wrappers around the drivers cost the timings nothing.
  installStatementCounters();
  for (const entry of selected) {
    const system = opened.get(entry.key);
    if (system === undefined || !entry.counted) continue;
    countsBySystem.set(entry.key, await countStatements(system));
  }
} finally {
  for (const system of opened.values()) await system.close().catch((error: unknown) => console.error(error));
  postgres?.stop();
}

interface SystemSummary {
  key: string;
  name: string;
  msPerStep: number;
  /** Median Steps per second by caller count. */
  stepsPerSecondByCallers: Record<string, number>;
  zeroStepFlowMs: number;
  counts: { perStep: StatementCounts; perZeroStepFlow: StatementCounts } | undefined;
  rounds: WorkloadRound[];
}

const summaries: SystemSummary[] = selected.flatMap((entry) => {
  const system = opened.get(entry.key);
  const measured = roundsBySystem.get(entry.key) ?? [];
  if (system === undefined || measured.length === 0) return [];
  return [{
    key: entry.key,
    name: system.name,
    msPerStep: median(measured.map((round) => round.msPerStep)),
    stepsPerSecondByCallers: Object.fromEntries(callerCounts.map((callers) => [String(callers), median(measured.map((round) => round.stepsPerSecondByCallers[String(callers)] ?? Number.NaN))])),
    zeroStepFlowMs: median(measured.map((round) => round.flowMsBySteps["0"] ?? Number.NaN)),
    counts: countsBySystem.get(entry.key),
    rounds: measured,
  }];
});

console.log("");
const stepsPerSecondAt = (summary: SystemSummary, callers: number): number => summary.stepsPerSecondByCallers[String(callers)] ?? Number.NaN;
const header = ["system", "per Step (slope)", ...callerCounts.map((callers) => `Steps/s, ${callers} callers`), "0-Step flow", "statements/Step", "round trips/Step", "each round (ms/Step; Steps/s by callers)"];
const rows = summaries.map((summary) => [
  summary.name,
  `${summary.msPerStep.toFixed(3)} ms`,
  ...callerCounts.map((callers) => Math.round(stepsPerSecondAt(summary, callers)).toLocaleString("en-US")),
  `${summary.zeroStepFlowMs.toFixed(2)} ms`,
  summary.counts === undefined ? "" : (summary.counts.perStep.statements + summary.counts.perStep.controlStatements).toFixed(1),
  summary.counts === undefined || !summary.key.includes("postgres") ? "" : summary.counts.perStep.roundTrips.toFixed(2),
  summary.rounds.map((round) => `${round.msPerStep.toFixed(3)}; ${callerCounts.map((callers) => Math.round(round.stepsPerSecondByCallers[String(callers)] ?? Number.NaN)).join(", ")}`).join(" / "),
]);
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
const line = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
console.log(line(header));
console.log(widths.map((width) => "-".repeat(width)).join("  "));
for (const row of rows) console.log(line(row));

const peers = summaries.filter((summary) => !summary.key.startsWith("perdure") && !summary.key.startsWith("baseline"));
const ratios: { perdure: string; peer: string; perStep: number; stepsPerSecondByCallers: Record<string, number>; zeroStepFlow: number }[] = [];
for (const perdure of summaries.filter((summary) => summary.key.startsWith("perdure"))) {
  for (const peer of peers) {
    ratios.push({
      perdure: perdure.name,
      peer: peer.name,
      perStep: perdure.msPerStep / peer.msPerStep,
      stepsPerSecondByCallers: Object.fromEntries(callerCounts.map((callers) => [String(callers), stepsPerSecondAt(perdure, callers) / stepsPerSecondAt(peer, callers)])),
      zeroStepFlow: perdure.zeroStepFlowMs / peer.zeroStepFlowMs,
    });
  }
}
if (ratios.length > 0) {
  console.log(`\nratios (Perdure / peer): per Step (lower is better), Steps/s at ${callerCounts.join(" and ")} callers (higher is better), 0-Step flow (lower is better)`);
  for (const ratio of ratios) {
    const throughput = callerCounts.map((callers) => `${(ratio.stepsPerSecondByCallers[String(callers)] ?? Number.NaN).toFixed(2)}x`).join(", ");
    console.log(`  ${ratio.perdure} / ${ratio.peer}: ${ratio.perStep.toFixed(2)}x, ${throughput}, ${ratio.zeroStepFlow.toFixed(2)}x`);
  }
}
for (const failure of failures) console.log(`\n${failure.system} did not run: ${failure.error.split("\n")[0] ?? ""}`);

const outputPath = resolve(benchDirectory, values.out ?? "results/peers-latest.json");
mkdirSync(dirname(outputPath), { recursive: true });
writeFileSync(outputPath, `${JSON.stringify({ generatedAt: new Date().toISOString(), quick, rounds, engineRevision: revision ?? null, machine: { ...machine, loadAverageAtEnd: loadavg() }, summaries, ratios, failures }, null, 2)}\n`);
console.log(`\nJSON in ${outputPath}`);
