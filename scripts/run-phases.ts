// `npm test`: the structure check first (a second, and the cheapest way to
// fail), then three lanes at once, since none needs another's output:
//
//   typecheck            tsc -b
//   lint                 eslint .
//   build:web → test:unit  (the browser tests serve the built web UI)
//
// The tests' output streams as it comes; typecheck's and lint's (empty when
// they pass) is held and printed in one piece when they end, so lanes never
// interleave. A summary gives each phase's wall time and the CPU time
// of its processes. The exit code is non-zero when any phase failed.
// docs/decisions/2026-12-06-ci-phases-run-concurrently.md
//
//   node scripts/run-phases.ts
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const repositoryRoot = resolve(import.meta.dirname, "..");

interface PhaseResult {
  readonly name: string;
  readonly exitCode: number;
  readonly wallSeconds: number;
  /** User plus system CPU time of the phase's processes, or null when the shell did not say. */
  readonly cpuSeconds: number | null;
  readonly output: string;
}

/** Seconds in a `times` field such as `1m2.345s`. */
function secondsOf(field: string): number {
  const match = /^(\d+)m([\d.]+)s$/.exec(field);
  return match === null ? Number.NaN : Number(match[1]) * 60 + Number(match[2]);
}

/**
 * Runs one npm script in bash and reads its CPU time with bash's `times`
 * builtin, which counts every process the script waited for (test files'
 * child processes and browsers included).
 */
function runPhase(name: string, scratch: string, live: boolean): Promise<PhaseResult> {
  const timesFile = join(scratch, `${name.replace(/\W/g, "-")}.times`);
  const started = performance.now();
  const child = spawn("bash", ["-c", `npm run --silent ${name}; status=$?; times > "$1"; exit $status`, "bash", timesFile], {
    cwd: repositoryRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const chunks: Buffer[] = [];
  const take = (chunk: Buffer): void => {
    if (live) process.stdout.write(chunk);
    else chunks.push(chunk);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return new Promise((resolvePhase) => {
    child.once("close", (code, signal) => {
      let cpuSeconds: number | null = null;
      try {
        // Line 2 of `times`: the children's user and system time.
        const [user, system] = (readFileSync(timesFile, "utf8").split("\n")[1] ?? "").trim().split(/\s+/);
        const total = secondsOf(user ?? "") + secondsOf(system ?? "");
        cpuSeconds = Number.isFinite(total) ? total : null;
      } catch {
        // The shell was killed before it wrote the file.
      }
      const output = Buffer.concat(chunks).toString();
      resolvePhase({ name, exitCode: code ?? (signal === null ? 1 : 128), wallSeconds: (performance.now() - started) / 1000, cpuSeconds, output });
    });
  });
}

function report(result: PhaseResult): void {
  const status = result.exitCode === 0 ? "passed" : `FAILED (exit code ${result.exitCode})`;
  process.stdout.write(`\n──── ${result.name}: ${status}\n${result.output}`);
}

/** The one lane whose output streams; the others' is short and waits for its end. */
const livePhases = new Set(["build:web", "test:unit"]);

/** Runs `names` one after another, stopping at the first failure. */
async function runLane(names: readonly string[], scratch: string): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (const name of names) {
    const result = await runPhase(name, scratch, livePhases.has(name));
    report(result);
    results.push(result);
    if (result.exitCode !== 0) break;
  }
  return results;
}

function summarize(results: readonly PhaseResult[], skipped: readonly string[], wallSeconds: number): void {
  const rows = results.map((result) =>
    `  ${result.name.padEnd(16)} ${(result.exitCode === 0 ? "passed" : "FAILED").padEnd(7)} ${result.wallSeconds.toFixed(0).padStart(5)} s wall ${result.cpuSeconds === null ? "    ?" : result.cpuSeconds.toFixed(0).padStart(5)} s CPU`);
  for (const name of skipped) rows.push(`  ${name.padEnd(16)} skipped (an earlier phase of its lane failed)`);
  process.stdout.write(`\n──── phases\n${rows.join("\n")}\n  ${"all".padEnd(16)} ${" ".repeat(7)} ${wallSeconds.toFixed(0).padStart(5)} s wall\n`);
}

const lanes: readonly (readonly string[])[] = [["typecheck"], ["lint"], ["build:web", "test:unit"]];
const scratch = mkdtempSync(join(tmpdir(), "perdure-phases-"));
const started = performance.now();
try {
  const structure = await runLane(["check:structure"], scratch);
  const results = [...structure];
  if (structure.every((result) => result.exitCode === 0)) {
    for (const lane of await Promise.all(lanes.map((lane) => runLane(lane, scratch)))) results.push(...lane);
  }
  const ran = new Set(results.map((result) => result.name));
  const skipped = ["check:structure", ...lanes.flat()].filter((name) => !ran.has(name));
  summarize(results, skipped, (performance.now() - started) / 1000);
  process.exitCode = results.every((result) => result.exitCode === 0) && skipped.length === 0 ? 0 : 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
