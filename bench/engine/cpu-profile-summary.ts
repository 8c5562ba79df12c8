/**
 * Prints the functions and files with the most self time in a V8 CPU profile.
 *
 *   node --cpu-prof --cpu-prof-dir=results/profiles engine/run.ts --only=step-overhead-process-crash-safe
 *   node engine/cpu-profile-summary.ts results/profiles      # newest .cpuprofile in the folder
 *   node engine/cpu-profile-summary.ts some.cpuprofile --top=40
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const repositoryRoot = resolve(fileURLToPath(import.meta.url), "../../..");

function newestProfile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const profiles = readdirSync(path).filter((name) => name.endsWith(".cpuprofile")).map((name) => join(path, name));
  const newest = profiles.sort((left, right) => statSync(right).mtimeMs - statSync(left).mtimeMs)[0];
  if (newest === undefined) throw new Error(`no .cpuprofile in ${path}`);
  return newest;
}

function shortLocation(url: string): string {
  if (url === "") return "";
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  return path.startsWith(repositoryRoot) ? relative(repositoryRoot, path) : path;
}

function addTo(totals: Map<string, number>, key: string, microseconds: number): void {
  totals.set(key, (totals.get(key) ?? 0) + microseconds);
}

function printTop(title: string, totals: Map<string, number>, totalMicroseconds: number, top: number): void {
  console.log(`\n${title}`);
  const sorted = [...totals].sort((left, right) => right[1] - left[1]).slice(0, top);
  for (const [key, microseconds] of sorted) {
    console.log(`${(microseconds / 1000).toFixed(1).padStart(9)} ms ${((100 * microseconds) / totalMicroseconds).toFixed(1).padStart(5)} %  ${key}`);
  }
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string", default: "25" } } });
const target = positionals[0];
if (target === undefined) throw new Error("usage: node engine/cpu-profile-summary.ts <file.cpuprofile | folder> [--top=25]");
const file = newestProfile(target);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
const nodesById = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let busyMicroseconds = 0;
profile.samples.forEach((nodeId, index) => {
  const node = nodesById.get(nodeId);
  const delta = profile.timeDeltas[index] ?? 0;
  if (node === undefined) return;
  const { functionName, url, lineNumber } = node.callFrame;
  // Idle is time the thread waited (for timers, the other process, or disk), not work.
  if (functionName === "(idle)") return;
  busyMicroseconds += delta;
  const location = shortLocation(url);
  addTo(byFunction, `${functionName || "(anonymous)"}${location === "" ? "" : `  ${location}:${lineNumber + 1}`}`, delta);
  addTo(byFile, location === "" ? functionName : location, delta);
});
console.log(`${file}: ${((profile.endTime - profile.startTime) / 1000).toFixed(0)} ms profiled, ${(busyMicroseconds / 1000).toFixed(0)} ms busy (self time, idle excluded)`);
const top = Number(values.top);
printTop("Top functions by self time", byFunction, busyMicroseconds, top);
printTop("Top files by self time", byFile, busyMicroseconds, Math.min(top, 15));
