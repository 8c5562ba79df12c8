/**
 * Engine benchmarks on the PostgreSQL store. Needs a server: set
 * PERDURE_BENCH_DATABASE_URL (or PERDURE_TEST_DATABASE_URL); without one the
 * scenarios print that they were skipped. Each scenario uses a fresh schema
 * and drops it afterwards. From the repo root:
 *
 *   eval "$(bash scripts/start-test-postgres.sh)"
 *   npm run bench:postgres --workspace=bench
 *   npm run bench:postgres --workspace=bench -- --quick --only=postgres-scale-out
 *   bash scripts/stop-test-postgres.sh "$PERDURE_TEST_POSTGRES_DIR"
 *
 * Prints a table and writes JSON to bench/results/postgres-latest.json.
 */
import { runBenchmarkCli, type Scenario } from "./cli.ts";
import { measurePostgresScaleOut } from "./scenarios/postgres-scale-out.ts";
import { measurePostgresStepOverhead } from "./scenarios/postgres-step-overhead.ts";

const scenarios: readonly Scenario[] = [
  { name: "postgres-step-overhead", description: "no-op Step chain, one flow, PostgreSQL over loopback, plus a raw INSERT+COMMIT baseline", run: measurePostgresStepOverhead },
  { name: "postgres-scale-out", description: "Steps/s of 64 concurrent no-op chains with 1, 2 and 4 Worker processes on PostgreSQL", run: measurePostgresScaleOut },
];

await runBenchmarkCli({
  title: "Perdure engine benchmarks on PostgreSQL",
  script: "engine/postgres-run.ts",
  scenarios,
  defaultOutput: "results/postgres-latest.json",
  revisionPaths: ["packages/engine"],
});
