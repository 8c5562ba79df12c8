/**
 * A PostgreSQL cluster of one test's own, started with
 * scripts/start-test-postgres.sh, which the test may stop hard and start
 * again without disturbing the shared test server.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = resolve(fileURLToPath(new URL("../../../../..", import.meta.url)));

/** A running private cluster. */
export interface PrivatePostgresCluster {
  url: string;
  /** Stops the server at once, as a crash would (`pg_ctl stop -m immediate`). */
  crash(): void;
  /** Starts the stopped server again on the same port. */
  restart(): void;
  /** Stops the server and removes its folder. */
  remove(): void;
}

function run(command: string, args: readonly string[], environment: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { encoding: "utf8", env: environment, timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${String(result.status)}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

/** Starts a private cluster on `port` with the repository's script, which finds PostgreSQL or installs it. */
export function startPrivatePostgresCluster(port: number): PrivatePostgresCluster {
  const folder = mkdtempSync(join(tmpdir(), "perdure-private-pg-"));
  const output = run("bash", [join(repositoryRoot, "scripts/start-test-postgres.sh")], { ...process.env, PERDURE_TEST_POSTGRES_DIR: folder, PERDURE_TEST_POSTGRES_PORT: String(port) });
  const read = (name: string): string => {
    const match = new RegExp(`^export ${name}='(.*)'$`, "m").exec(output);
    if (match?.[1] === undefined) throw new Error(`start-test-postgres.sh printed no ${name}:\n${output}`);
    return match[1];
  };
  const url = read("PERDURE_TEST_DATABASE_URL");
  const binDirectory = read("PERDURE_TEST_POSTGRES_BINDIR");
  const dataDirectory = join(folder, "data");
  // The cluster runs as its folder's owner; root runs pg_ctl as that user, as the scripts do.
  const asOwner = (args: readonly string[]): [string, string[]] => {
    if (process.getuid?.() !== 0) return [join(binDirectory, "pg_ctl"), [...args]];
    const owner = run("stat", ["-c", "%U", dataDirectory]).trim();
    return ["runuser", ["-u", owner, "--", join(binDirectory, "pg_ctl"), ...args]];
  };
  const pgCtl = (args: readonly string[]): void => {
    const [command, commandArgs] = asOwner(args);
    run(command, commandArgs);
  };
  return {
    url,
    crash: () => pgCtl(["-D", dataDirectory, "-m", "immediate", "-w", "stop"]),
    restart: () => pgCtl(["-D", dataDirectory, "-l", join(folder, "server.log"), "-w", "-t", "60", "-o", `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c max_connections=300`, "start"]),
    remove: () => {
      try {
        if (statSync(join(dataDirectory, "postmaster.pid"), { throwIfNoEntry: false }) !== undefined) pgCtl(["-D", dataDirectory, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}
