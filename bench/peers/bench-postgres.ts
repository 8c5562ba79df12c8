/**
 * The PostgreSQL server of the peer bench: a private cluster the bench starts
 * with scripts/start-test-postgres.sh and stops at the end, unless
 * PERDURE_BENCH_DATABASE_URL names one to use instead.
 */
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface BenchPostgres {
  connectionString: string;
  /** Whether the bench started the cluster (and so stops it). */
  started: boolean;
  stop(): void;
}

function exported(text: string, name: string): string | undefined {
  return new RegExp(`^export ${name}='([^']*)'$`, "m").exec(text)?.[1];
}

export function startBenchPostgres(): BenchPostgres {
  const given = process.env["PERDURE_BENCH_DATABASE_URL"];
  if (given !== undefined && given !== "") return { connectionString: given, started: false, stop: () => undefined };
  const output = execFileSync("bash", [resolve(repositoryRoot, "scripts/start-test-postgres.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PERDURE_TEST_POSTGRES_PORT: process.env["PERDURE_BENCH_POSTGRES_PORT"] ?? "" },
  });
  const connectionString = exported(output, "PERDURE_TEST_DATABASE_URL");
  const folder = exported(output, "PERDURE_TEST_POSTGRES_DIR");
  if (connectionString === undefined || folder === undefined) throw new Error(`scripts/start-test-postgres.sh printed no connection string: ${output}`);
  return {
    connectionString,
    started: true,
    stop: () => {
      execFileSync("bash", [resolve(repositoryRoot, "scripts/stop-test-postgres.sh"), folder], { stdio: ["ignore", "inherit", "inherit"] });
    },
  };
}
