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
import { runBenchmarkCli, type Scenario } from "./cli.ts";
import { measureConcurrentFlows } from "./scenarios/concurrent-flows.ts";
import { measureFanOut } from "./scenarios/fan-out.ts";
import { measureIdleMemory } from "./scenarios/idle-memory.ts";
import { runRawSqliteBaseline } from "./scenarios/raw-sqlite.ts";
import { measureStepOverhead } from "./scenarios/step-overhead.ts";

const scenarios: readonly Scenario[] = [
  { name: "raw-sqlite", description: "node:sqlite INSERT+COMMIT loop in WAL, synchronous NORMAL and FULL", run: runRawSqliteBaseline },
  { name: "step-overhead-process-crash-safe", description: "no-op Step chain, one flow, process-crash-safe", run: (settings) => measureStepOverhead("process-crash-safe", settings) },
  { name: "step-overhead-full", description: "no-op Step chain, one flow, full durability", run: (settings) => measureStepOverhead("full", settings) },
  { name: "concurrency", description: "Steps/s with 1, 8 and 64 concurrent no-op chains", run: measureConcurrentFlows },
  { name: "fan-out", description: "moveToMany to 100 publishing Steps joined by received(exactly 100)", run: measureFanOut },
  { name: "idle-memory", description: "Worker process memory with 0, 1,000 and 10,000 idle waiting flows", run: measureIdleMemory },
];

await runBenchmarkCli({
  title: "Perdure engine benchmarks",
  script: "engine/run.ts",
  scenarios,
  defaultOutput: "results/latest.json",
  revisionPaths: ["packages/engine"],
});
