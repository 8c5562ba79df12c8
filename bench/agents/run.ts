/**
 * Agent session benchmarks on the real SQLite store, with a scripted runner
 * whose model calls and tool cost nothing. Run from the repo root (the root
 * package.json has no script for them, so name the workspace):
 *
 *   npm run bench:agents --workspace bench                          # everything, under 2 minutes
 *   npm run bench:agents --workspace bench -- --quick               # smaller sizes, under 20 s
 *   npm run bench:agents --workspace bench -- --only=sessions       # one scenario (or a prefix, or a comma list)
 *   npm run bench:agents --workspace bench -- --out=results/recorded/agents-run-1.json
 *
 * Inside bench/ it is `npm run bench:agents -- --quick` or `node agents/run.ts --quick`.
 * Prints a table and writes machine-readable JSON to bench/results/agents-latest.json.
 */
import { runBenchmarkCli, type Scenario } from "../engine/cli.ts";
import { measureConcurrentSessions } from "./scenarios/concurrent-sessions.ts";
import { measureTracingOverhead } from "./scenarios/tracing-overhead.ts";
import { measureTurnOverhead } from "./scenarios/turn-overhead.ts";
import { measureForkSession } from "./scenarios/fork-session.ts";

const scenarios: readonly Scenario[] = [
  { name: "turn-overhead-process-crash-safe", description: "one session, turns with one read tool and an answer, process-crash-safe", run: (settings) => measureTurnOverhead("process-crash-safe", settings) },
  { name: "turn-overhead-full", description: "the same turns with full durability", run: (settings) => measureTurnOverhead("full", settings) },
  { name: "tracing-overhead", description: "the same turn with tracing off, the API without an SDK, and the SDK exporting to memory", run: measureTracingOverhead },
  { name: "sessions", description: "turns/s with 100 concurrent sessions, Worker concurrency 8 and 32", run: measureConcurrentSessions },
  { name: "fork-session", description: "forkSession at the middle and the end of sessions of 10 and 200 turns (100 with --quick)", run: measureForkSession },
];

await runBenchmarkCli({
  title: "Perdure agent session benchmarks",
  script: "agents/run.ts",
  scenarios,
  defaultOutput: "results/agents-latest.json",
  revisionPaths: ["packages/engine", "packages/agents"],
});
