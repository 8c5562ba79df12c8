/**
 * A throwaway PostgreSQL primary and a streaming standby on loopback, for
 * failover tests: own data folders and ports under a temporary folder, the
 * binaries of `PERDURE_TEST_POSTGRES_BINDIR`, trust authentication on
 * loopback only. The standby replicates through a {@link CuttableTcpProxy},
 * so a test can make it fall behind (asynchronous variant) by cutting that
 * link before the primary dies.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findFreeLoopbackPorts } from "@perdure/agents/testing";
import { CuttableTcpProxy } from "@perdure/engine/testing";

export interface ReplicatedPostgresOptions {
  /** `synchronous_commit = on` with the standby in `synchronous_standby_names`; otherwise asynchronous. */
  synchronous: boolean;
  /**
   * With `synchronous: false`: the standby is in `synchronous_standby_names`
   * but the default `synchronous_commit` is `local`, so ordinary commits stay
   * asynchronous and only transactions that raise it wait for the standby.
   */
  namedStandby?: boolean;
}

const databaseUser = "perdure";

/** The binaries folder, or a reason to skip. */
export function replicatedPostgresSkip(): string | false {
  const bindir = process.env.PERDURE_TEST_POSTGRES_BINDIR;
  if (bindir === undefined || bindir === "") return "PERDURE_TEST_POSTGRES_BINDIR is not set: source the env of scripts/start-test-postgres.sh";
  try {
    statSync(join(bindir, "pg_basebackup"));
  } catch {
    return `${bindir} has no pg_basebackup`;
  }
  return false;
}

const execFileAsync = promisify(execFile);

/** Whom a root process runs the servers as, as scripts/start-test-postgres.sh decides: `postgres`, else `nobody`. */
const clusterUser = ((): string => {
  try {
    execFileSync("id", ["postgres"], { stdio: "ignore" });
    return "postgres";
  } catch {
    return "nobody";
  }
})();

/**
 * Runs a PostgreSQL binary, as the cluster user when this process is root
 * (initdb refuses root); asynchronously, since the replication link's proxy
 * runs in this process.
 */
async function runBinary(name: string, args: readonly string[]): Promise<string> {
  const bindir = process.env.PERDURE_TEST_POSTGRES_BINDIR ?? "";
  const command = join(bindir, name);
  const isRoot = process.getuid?.() === 0;
  const { stdout } = await execFileAsync(isRoot ? "runuser" : command, isRoot ? ["-u", clusterUser, "--", command, ...args] : [...args], { encoding: "utf8", timeout: 120_000 });
  return stdout;
}

export class ReplicatedPostgres {
  readonly folder: string;
  readonly primaryPort: number;
  readonly standbyPort: number;
  /** The link the standby streams through; cut it to make the standby fall behind. */
  readonly replicationLink: CuttableTcpProxy;
  private primaryAlive = true;

  private constructor(folder: string, primaryPort: number, standbyPort: number, replicationLink: CuttableTcpProxy) {
    this.folder = folder;
    this.primaryPort = primaryPort;
    this.standbyPort = standbyPort;
    this.replicationLink = replicationLink;
  }

  /** Initializes and starts both servers and waits until the standby streams (as the synchronous one when asked). */
  static async start(options: ReplicatedPostgresOptions): Promise<ReplicatedPostgres> {
    const folder = mkdtempSync(join(tmpdir(), "perdure-failover-"));
    chmodSync(folder, 0o755);
    if (process.getuid?.() === 0) {
      const postgresUid = Number(execFileSync("id", ["-u", clusterUser], { encoding: "utf8" }).trim());
      const postgresGid = Number(execFileSync("id", ["-g", clusterUser], { encoding: "utf8" }).trim());
      chownSync(folder, postgresUid, postgresGid);
    }
    const [primaryPort = 0, standbyPort = 0] = await findFreeLoopbackPorts(2);
    const link = new CuttableTcpProxy({ host: "127.0.0.1", port: primaryPort });
    await link.open();
    const cluster = new ReplicatedPostgres(folder, primaryPort, standbyPort, link);
    try {
      await cluster.initialize(options);
    } catch (error) {
      // A half-started pair must not outlive the test: stop what runs and remove the folder.
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  private async initialize(options: ReplicatedPostgresOptions): Promise<void> {
    const { folder, primaryPort, standbyPort, replicationLink: link } = this;
    const primary = join(folder, "primary");
    await runBinary("initdb", ["-D", primary, "-U", databaseUser, "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]);
    const synchronous = options.synchronous ? ["-c", "synchronous_standby_names=standby1", "-c", "synchronous_commit=on"]
      : options.namedStandby === true ? ["-c", "synchronous_standby_names=standby1", "-c", "synchronous_commit=local"] : ["-c", "synchronous_standby_names="];
    await this.startServer(primary, primaryPort, synchronous);
    const standby = join(folder, "standby");
    await runBinary("pg_basebackup", ["-D", standby, "-R", "-X", "stream", "-d", `host=127.0.0.1 port=${link.port} user=${databaseUser} application_name=standby1`]);
    // A lone survivor must not wait for a standby it does not have: the promoted server runs without one.
    await this.startServer(standby, standbyPort, ["-c", "synchronous_standby_names="]);
    await this.waitForStreaming(options.synchronous || options.namedStandby === true ? "sync" : "async");
  }

  private async startServer(dataFolder: string, port: number, settings: readonly string[]): Promise<void> {
    const serverOptions = [`-p ${port}`, `-k ${this.folder}`, "-c listen_addresses=127.0.0.1", "-c max_connections=200", "-c wal_level=replica", "-c max_wal_senders=4", "-c hot_standby=on", "-c fsync=off",
      ...chunkSettings(settings)].join(" ");
    await runBinary("pg_ctl", ["-D", dataFolder, "-l", join(this.folder, `${port}.log`), "-w", "-t", "60", "-o", serverOptions, "start"]);
  }

  /** The URL of the primary's or standby's `postgres` database. */
  url(port: number): string {
    return `postgres://${databaseUser}@127.0.0.1:${port}/postgres`;
  }

  /** Runs one SQL statement with psql on the server on `port`; returns its unaligned output. */
  async query(port: number, sql: string): Promise<string> {
    return (await runBinary("psql", ["-h", this.folder, "-p", String(port), "-U", databaseUser, "-d", "postgres", "-Atc", sql])).trim();
  }

  private async waitForStreaming(syncState: "sync" | "async"): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const state = await this.query(this.primaryPort, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'");
      if (state === syncState) return;
      if (Date.now() > deadline) throw new Error(`the standby did not start streaming as ${syncState} within 60 s:\n${this.serverLog(this.standbyPort)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** The server log of the server on `port`. */
  serverLog(port: number): string {
    try {
      return readFileSync(join(this.folder, `${port}.log`), "utf8");
    } catch {
      return "";
    }
  }

  /** Kills the primary at once (SIGKILL to its postmaster, then an immediate stop of what remains), as a crashed host. */
  async killPrimary(): Promise<void> {
    const primary = join(this.folder, "primary");
    const pid = Number(readFileSync(join(primary, "postmaster.pid"), "utf8").split("\n")[0]);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
    try {
      await runBinary("pg_ctl", ["-D", primary, "-m", "immediate", "stop"]);
    } catch {
      // A killed postmaster leaves nothing for pg_ctl to stop.
    }
    this.primaryAlive = false;
  }

  /** Promotes the standby and waits until it accepts writes. */
  async promoteStandby(): Promise<void> {
    await runBinary("pg_ctl", ["-D", join(this.folder, "standby"), "-w", "-t", "60", "promote"]);
  }

  /** Stops both servers and removes the folder. */
  async dispose(): Promise<void> {
    await this.replicationLink.cut();
    for (const name of this.primaryAlive ? ["primary", "standby"] : ["standby"]) {
      try {
        await runBinary("pg_ctl", ["-D", join(this.folder, name), "-m", "immediate", "-w", "stop"]);
      } catch {
        // Not running.
      }
    }
    rmSync(this.folder, { recursive: true, force: true });
  }
}

/** `["-c", "a=b"]` pairs as `-c a=b` words for `pg_ctl -o` (an empty value quoted). */
function chunkSettings(settings: readonly string[]): string[] {
  const words: string[] = [];
  for (let index = 0; index < settings.length; index += 2) {
    const setting = settings[index + 1] ?? "";
    const [name, value] = setting.split("=");
    words.push(`-c ${name}=${value === "" ? "''" : value}`);
  }
  return words;
}
