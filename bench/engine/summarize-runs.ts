/**
 * Medians across several recorded runs, as a Markdown table for RESULTS.md.
 *
 *   node engine/summarize-runs.ts results/recorded/run-*.json
 */
import { readFileSync } from "node:fs";
import type { Measurement } from "./support.ts";
import { median } from "./support.ts";

interface RecordedRun {
  measurements: Measurement[];
  machine: { loadAverageAtStart: number[] };
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: node engine/summarize-runs.ts <run.json> [<run.json> ...]");
const runs = files.map((file) => JSON.parse(readFileSync(file, "utf8")) as RecordedRun);
const keyOf = (measurement: Measurement): string => `${measurement.scenario}\u0000${measurement.metric}`;
const firstRun = runs[0]?.measurements ?? [];

function format(value: number, unit: string): string {
  if (unit.endsWith("/s")) return Math.round(value).toLocaleString("en-US");
  if (unit === "MiB" || (unit === "ms" && Math.abs(value) >= 10)) return value.toFixed(2);
  if (unit === "%") return value.toFixed(0);
  if (unit.endsWith("/turn")) return value.toFixed(2);
  return value.toFixed(3);
}

console.log(`Load average (1 min) at the start of each run: ${runs.map((run) => run.machine.loadAverageAtStart[0]?.toFixed(2) ?? "?").join(", ")}\n`);
console.log(`| Scenario | Metric | Median of ${runs.length} runs | Each run | Target |`);
console.log("| --- | --- | --- | --- | --- |");
for (const measurement of firstRun) {
  const values = runs.map((run) => run.measurements.find((each) => keyOf(each) === keyOf(measurement))?.value ?? Number.NaN);
  const middle = median(values.filter((value) => !Number.isNaN(value)));
  const target = measurement.target === undefined ? "" : `${measurement.target.text}: ${middle <= measurement.target.maximum ? "met" : "**missed**"}`;
  console.log(`| ${measurement.scenario} | ${measurement.metric} | ${format(middle, measurement.unit)} ${measurement.unit} | ${values.map((value) => format(value, measurement.unit)).join(" / ")} | ${target} |`);
}
