/**
 * `npm run bench:long`: a 2,000-turn compacting agent session on the real
 * SQLite store, with a read tool call in every turn on the scripted model.
 * Prints a table, writes JSON to bench/results/long-session-latest.json and
 * the plot of per-turn time to bench/results/long-session.png (and .svg).
 *
 *   npm run bench:long                      # from the repository root: the compacting session, under a minute
 *   npm run bench:long -- --quick           # 400 turns
 *   npm run bench:long -- --out=results/recorded/long-session-run-1.json
 *   node agents/long-session/run.ts --only=no-compaction-baseline   # inside bench/: the same session without compaction
 *   npm run bench:long:postgres             # the compacting session on PostgreSQL (the bench starts its own cluster)
 *   PERDURE_BENCH_LONG_TURNS=3000 npm run bench:long                 # another length
 *
 * Profile it with `node --cpu-prof --cpu-prof-dir=results/profiles agents/long-session/run.ts`
 * inside bench/, then `node engine/cpu-profile-summary.ts results/profiles`.
 */
import { runBenchmarkCli } from "../../engine/cli.ts";
import { measureLongSession } from "./measure-long-session.ts";

await runBenchmarkCli({
  title: "Perdure long-session benchmark",
  script: "agents/long-session/run.ts",
  scenarios: [
    { name: "long-session", description: "one session, 2,000 turns with a read tool and an answer, compaction and retention on", run: (settings) => measureLongSession(settings, { compaction: true }) },
    { name: "long-session-postgres", description: "the compacting session on PostgreSQL (a private cluster the bench starts), late turns against a fresh session's", run: (settings) => measureLongSession(settings, { compaction: true, store: "postgres" }) },
    { name: "no-compaction-baseline", description: "the same session without a compaction policy (so no retention): the cost compaction removes", run: (settings) => measureLongSession(settings, { compaction: false }) },
  ],
  defaultOutput: "results/long-session-latest.json",
  revisionPaths: ["packages/engine", "packages/agents"],
});
