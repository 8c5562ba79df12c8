/**
 * The command line both benchmark entry points share: `--only`, `--quick`,
 * `--out` and `--help`, the printed table and the JSON report.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { BenchmarkSettings, Measurement, ScenarioResult } from "./support.ts";
import { describeEngineRevision, describeMachine } from "./support.ts";

export interface Scenario {
  name: string;
  description: string;
  run: (settings: BenchmarkSettings) => Promise<ScenarioResult>;
}

export interface BenchmarkCli {
  /** Printed first, as in "Perdure engine benchmarks". */
  title: string;
  /** The script, for `--help`, relative to bench/. */
  script: string;
  scenarios: readonly Scenario[];
  /** Where the JSON goes without `--out`, relative to bench/. */
  defaultOutput: string;
  /** Packages whose uncommitted changes the report flags ("+ uncommitted changes"). */
  revisionPaths: readonly string[];
}

/** The bench folder: `npm run bench` runs there, so a relative `--out` is taken from it. */
export const benchDirectory = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function parseOptions(cli: BenchmarkCli): { settings: BenchmarkSettings; selected: Scenario[]; outputPath: string; only: string | undefined } {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      out: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(`usage: node ${cli.script} [--quick] [--only=<scenario>[,<scenario>...]] [--out=<json path>]\n\nscenarios (a prefix selects several):`);
    for (const scenario of cli.scenarios) console.log(`  ${scenario.name.padEnd(34)} ${scenario.description}`);
    process.exit(0);
  }
  const wanted = values.only?.split(",").map((name) => name.trim()).filter((name) => name.length > 0);
  const selected = wanted === undefined ? [...cli.scenarios] : cli.scenarios.filter((scenario) => wanted.some((name) => scenario.name === name || scenario.name.startsWith(name)));
  if (selected.length === 0) throw new Error(`--only=${values.only ?? ""} matches no scenario; known: ${cli.scenarios.map((scenario) => scenario.name).join(", ")}`);
  const outputPath = resolve(benchDirectory, values.out ?? cli.defaultOutput);
  // `npm run bench -- --quick` from the root hands --quick to npm, which passes it on only as npm_config_quick.
  const quick = values.quick || process.env.npm_config_quick === "true";
  return { settings: { quick }, selected, outputPath, only: values.only };
}

function formatValue(measurement: Measurement): string {
  const { value, unit } = measurement;
  if (!Number.isFinite(value)) return String(value);
  if (unit.endsWith("/s")) return `${Math.round(value).toLocaleString("en-US")} ${unit}`;
  if (unit === "MiB") return `${value.toFixed(2)} ${unit}`;
  if (unit === "%") return `${value.toFixed(0)} ${unit}`;
  // Counts per turn (Steps, transactions, reads): two decimals.
  if (unit.endsWith("/turn")) return `${value.toFixed(2)} ${unit}`;
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

/** Runs the selected scenarios one after another, prints the table and writes the JSON report. */
export async function runBenchmarkCli(cli: BenchmarkCli): Promise<void> {
  const { settings, selected, outputPath, only } = parseOptions(cli);
  const machine = describeMachine();
  const loadAverageAtStart = loadavg();
  const engineRevision = describeEngineRevision(resolve(benchDirectory, ".."), cli.revisionPaths);
  const revisionText = engineRevision === undefined ? "unknown revision" : `engine ${engineRevision.commit.slice(0, 7)}${engineRevision.packagesDirty ? " + uncommitted changes" : ""}`;
  console.log(`${cli.title}${settings.quick ? " (--quick)" : ""}: ${revisionText}; ${machine.nproc} cores ${machine.cpuModel}, Node ${machine.node}, load average ${loadAverageAtStart.map((load) => load.toFixed(2)).join(" ")}`);
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
