/**
 * Engine benchmarks on the real SQLite store. Run from the repo root:
 *
 *   npm run bench                          # everything, about a minute
 *   npm run bench -- -- --quick            # smaller sizes, under 30 s
 *   npm run bench -- -- --only=fan-out     # one scenario (or a prefix, or a comma list)
 *   npm run bench -- -- --out=results/recorded/run-1.json
 *
 * The root script forwards to the bench workspace, hence the second `--`;
 * inside bench/ (or with `node bench/engine/run.ts`) one is enough.
 * Prints a table and writes machine-readable JSON to bench/results/latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { measureConcurrentFlows } from "./scenarios/concurrent-flows.ts";
import { measureFanOut } from "./scenarios/fan-out.ts";
import { measureIdleMemory } from "./scenarios/idle-memory.ts";
import { runRawSqliteBaseline } from "./scenarios/raw-sqlite.ts";
import { measureStepOverhead } from "./scenarios/step-overhead.ts";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "./support.ts";
import { describeEngineRevision, describeMachine } from "./support.ts";

interface Scenario {
  name: string;
  description: string;
  run: (settings: BenchmarkSettings) => Promise<ScenarioResult>;
}

const scenarios: readonly Scenario[] = [
  { name: "raw-sqlite", description: "node:sqlite INSERT+COMMIT loop in WAL, synchronous NORMAL and FULL", run: runRawSqliteBaseline },
  { name: "step-overhead-process-crash-safe", description: "no-op Step chain, one flow, process-crash-safe", run: (settings) => measureStepOverhead("process-crash-safe", settings) },
  { name: "step-overhead-full", description: "no-op Step chain, one flow, full durability", run: (settings) => measureStepOverhead("full", settings) },
  { name: "concurrency", description: "Steps/s with 1, 8 and 64 concurrent no-op chains", run: measureConcurrentFlows },
  { name: "fan-out", description: "moveToMany to 100 publishing Steps joined by received(exactly 100)", run: measureFanOut },
  { name: "idle-memory", description: "Worker process memory with 0, 1,000 and 10,000 idle waiting flows", run: measureIdleMemory },
];

const benchDirectory = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function parseOptions(): { settings: BenchmarkSettings; selected: Scenario[]; outputPath: string; only: string | undefined } {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      out: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log("usage: node engine/run.ts [--quick] [--only=<scenario>[,<scenario>...]] [--out=<json path>]\n\nscenarios (a prefix selects several):");
    for (const scenario of scenarios) console.log(`  ${scenario.name.padEnd(34)} ${scenario.description}`);
    process.exit(0);
  }
  const wanted = values.only?.split(",").map((name) => name.trim()).filter((name) => name.length > 0);
  const selected = wanted === undefined ? [...scenarios] : scenarios.filter((scenario) => wanted.some((name) => scenario.name === name || scenario.name.startsWith(name)));
  if (selected.length === 0) throw new Error(`--only=${values.only ?? ""} matches no scenario; known: ${scenarios.map((scenario) => scenario.name).join(", ")}`);
  // A relative --out is taken from the bench folder, where `npm run bench` runs.
  const outputPath = resolve(benchDirectory, values.out ?? "results/latest.json");
  // `npm run bench -- --quick` from the root hands --quick to npm, which passes it on only as npm_config_quick.
  const quick = values.quick || process.env.npm_config_quick === "true";
  return { settings: { quick }, selected, outputPath, only: values.only };
}

function formatValue(measurement: Measurement): string {
  const { value, unit } = measurement;
  if (!Number.isFinite(value)) return String(value);
  if (unit.endsWith("/s")) return `${Math.round(value).toLocaleString("en-US")} ${unit}`;
  if (unit === "MiB") return `${value.toFixed(2)} ${unit}`;
  if (unit === "ms" && value >= 10) return `${value.toFixed(1)} ${unit}`;
  return `${value.toFixed(value < 0.1 ? 4 : 3)} ${unit}`;
}

function verdict(measurement: Measurement): string {
  if (measurement.target === undefined) return "";
  return measurement.value <= measurement.target.maximum ? "met" : "MISSED";
}

function printTable(measurements: readonly Measurement[]): void {
  const header = ["Scenario", "Metric", "Value", "Target", "", "Note"];
  const rows = measurements.map((measurement) => [
    measurement.scenario,
    measurement.metric,
    formatValue(measurement),
    measurement.target?.text ?? "",
    verdict(measurement),
    measurement.note ?? "",
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 2 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join("  ").trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<void> {
  const { settings, selected, outputPath, only } = parseOptions();
  const machine = describeMachine();
  const loadAverageAtStart = loadavg();
  const engineRevision = describeEngineRevision(resolve(benchDirectory, ".."));
  const revisionText = engineRevision === undefined ? "unknown revision" : `engine ${engineRevision.commit.slice(0, 7)}${engineRevision.packagesDirty ? " + uncommitted changes" : ""}`;
  console.log(`Perdure engine benchmarks${settings.quick ? " (--quick)" : ""}: ${revisionText}; ${machine.nproc} cores ${machine.cpuModel}, Node ${machine.node}, load average ${loadAverageAtStart.map((load) => load.toFixed(2)).join(" ")}`);
  // Other processes on the cores inflate wall times; the load average is recorded so a noisy run can be recognised.
  const startedAt = performance.now();
  const measurements: Measurement[] = [];
  const details: Record<string, unknown> = {};
  const failures: { scenario: string; error: string }[] = [];
  for (const scenario of selected) {
    const scenarioStartedAt = performance.now();
    process.stdout.write(`  ${scenario.name} ... `);
    try {
      const result = await scenario.run(settings);
      measurements.push(...result.measurements);
      details[scenario.name] = result.details;
      console.log(`${((performance.now() - scenarioStartedAt) / 1000).toFixed(1)} s`);
    } catch (error) {
      console.log("FAILED");
      console.error(error);
      failures.push({ scenario: scenario.name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }
  const durationMs = performance.now() - startedAt;
  console.log("");
  printTable(measurements);
  console.log(`\n${selected.length} scenario(s) in ${(durationMs / 1000).toFixed(1)} s; JSON in ${outputPath}`);
  mkdirSync(dirname(outputPath), { recursive: true });
  const report = {
    generatedAt: new Date().toISOString(),
    quick: settings.quick,
    only: only ?? null,
    engineRevision: engineRevision ?? null,
    machine: { ...machine, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    durationMs,
    measurements,
    failures,
    details,
  };
  writeFileSync(outputPath, `${JSON.stringify(report, null, 2)}\n`);
  if (failures.length > 0) process.exitCode = 1;
}

await main();
