import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { FlowCore } from "../flow/flow.ts";
import { SqliteStore, type SqliteStoreOptions } from "../sqlite/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import { Worker, type WorkerOptions } from "../worker/worker.ts";

/** The line a child started by {@link runWorkerProcess} prints once its Worker runs. */
export const workerReadyLine = "perdure test worker ready";

/** Options of {@link startWorkerProcess}. */
export interface StartWorkerProcessOptions {
  /** A TypeScript (or JavaScript) module that calls {@link runWorkerProcess}. */
  entryModulePath: string;
  /** Added to the parent's environment. */
  env?: Record<string, string>;
  /** When set, the child's stdout and stderr are appended to this file. @default kept in memory, see `output()` */
  logPath?: string;
  /**
   * How long to wait for the ready line before killing the child and failing.
   * @default 60_000
   */
  readyTimeoutMs?: number;
  /**
   * The start of the line that tells the child is ready; the rest of the line
   * is the Worker ID. Give the same value to the child's {@link runWorkerProcess}.
   * @default workerReadyLine
   */
  readyLinePrefix?: string;
  /**
   * Moves the child's wall clock by this many milliseconds, as on a machine
   * whose clock is off: `Date.now()` and `new Date()` read the skewed time,
   * while its monotonic clock (`performance.now()`) runs as before. The
   * child's stores and Workers must not care (on PostgreSQL they read the
   * database's clock).
   * @default 0
   */
  wallClockSkewMs?: number;
}

/** The preload that skews a child's wall clock, beside this file (TypeScript sources or built JavaScript). */
const skewWallClockPreloadUrl = new URL(`./skew-wall-clock${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;

/** The child's `node` arguments and extra environment for `wallClockSkewMs`. */
function clockSkewLaunch(wallClockSkewMs: number | undefined): { execArgv: string[]; env: Record<string, string> } {
  const skewMs = wallClockSkewMs ?? 0;
  if (!Number.isFinite(skewMs)) throw new Error(`wallClockSkewMs ${String(wallClockSkewMs)} is invalid: use a number of milliseconds`);
  if (skewMs === 0) return { execArgv: [], env: {} };
  return { execArgv: ["--import", skewWallClockPreloadUrl], env: { PERDURE_TEST_CLOCK_SKEW_MS: String(skewMs) } };
}

/** A Worker running in a child process of its own process group. */
export interface WorkerProcess {
  readonly pid: number;
  /** The Worker ID the child reported in its ready line. */
  readonly workerId: string;
  /** Resolves with the exit code (or signal name) once the child exited. */
  readonly exited: Promise<number | string>;
  /** SIGKILLs the whole process group and waits for the child to exit; no cleanup runs. */
  kill(): Promise<void>;
  /**
   * SIGTERM: the child drains its Worker, closes the store and exits 0. After
   * `timeoutMs` (an attempt that never finishes) it is SIGKILLed instead.
   * Resolves with the exit code (or signal name).
   */
  stop(options?: { timeoutMs?: number }): Promise<number | string>;
  /** The last 64 KiB of stdout and stderr (when no `logPath` was given). */
  output(): string;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * Spawns `node <entryModulePath>` in its own process group and resolves once
 * the child prints {@link workerReadyLine}. Use it to kill a real Worker
 * process (SIGKILL) at an exact point and start another on the same store.
 *
 * @example
 * const child = await startWorkerProcess({ entryModulePath: fileURLToPath(new URL("./worker-main.ts", import.meta.url)), env: { STORE: path } });
 * await child.kill(); // as if the machine lost the process
 */
export async function startWorkerProcess(options: StartWorkerProcessOptions): Promise<WorkerProcess> {
  const skew = clockSkewLaunch(options.wallClockSkewMs);
  const child: ChildProcess = spawn(process.execPath, [...skew.execArgv, options.entryModulePath], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env, ...skew.env },
  });
  if (child.pid === undefined) {
    const error = await new Promise<unknown>((resolve) => child.once("error", resolve));
    throw new Error(`could not spawn a worker process for ${options.entryModulePath}`, { cause: error });
  }
  const pid = child.pid;
  let buffered = "";
  const record = (text: string): void => {
    if (options.logPath !== undefined) {
      appendFileSync(options.logPath, text);
      return;
    }
    buffered = (buffered + text).slice(-65_536);
  };
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  child.stderr?.setEncoding("utf8").on("data", (text: string) => record(text));
  const readyLinePrefix = options.readyLinePrefix ?? workerReadyLine;
  const ready = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let isReady = false;
    lines.on("line", (line) => {
      record(`${line}\n`);
      if (!isReady && line.startsWith(readyLinePrefix)) {
        isReady = true;
        resolve(line.slice(readyLinePrefix.length).trim());
      }
    });
    void exited.then((code) => reject(new Error(`worker process ${pid} exited (${code}) before it was ready:\n${buffered}`)));
  });
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`worker process ${pid} printed no ready line within ${readyTimeoutMs} ms:\n${buffered}`)), readyTimeoutMs);
  });
  let workerId: string;
  try {
    workerId = await Promise.race([ready, timeout]);
  } catch (error) {
    signalGroup(pid, "SIGKILL");
    await exited;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) signalGroup(pid, "SIGKILL");
    await exited;
  };
  return {
    pid,
    workerId,
    exited,
    kill,
    stop: async ({ timeoutMs = 10_000 } = {}) => {
      if (child.exitCode === null && child.signalCode === null) signalGroup(pid, "SIGTERM");
      const forced = setTimeout(() => signalGroup(pid, "SIGKILL"), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(forced);
      }
    },
    output: () => buffered,
  };
}

/** Options of {@link runWorkerProcess}. */
export interface RunWorkerProcessOptions {
  flows: readonly FlowCore[];
  /** The SQLite file the parent (and other children) use. */
  storePath: string;
  /** Overrides of the store options; `durability` defaults to `process-crash-safe`, `pollIntervalMs` to 20. */
  storeOptions?: Partial<Omit<SqliteStoreOptions, "path">>;
  /** Overrides of the Worker options; `livenessTimeoutMs` defaults to 1500 so tests recover fast. */
  workerOptions?: Partial<Omit<WorkerOptions, "store" | "flows">>;
  /**
   * Printed, followed by the Worker ID, once the Worker runs. Give the same
   * value to the parent's {@link startWorkerProcess}.
   * @default workerReadyLine
   */
  readyLinePrefix?: string;
}

/**
 * The child side of {@link startWorkerProcess}: opens the SQLite store, starts
 * a Worker, prints the ready line, and on SIGTERM (or SIGINT) closes the Worker
 * (draining running attempts) and the store, then exits 0. The child also exits
 * when its parent dies, so a crashed test run leaves no Worker behind.
 *
 * @example
 * // worker-main.ts
 * await runWorkerProcess({ flows: [orderFlow], storePath: process.env.STORE_PATH! });
 */
export async function runWorkerProcess(options: RunWorkerProcessOptions): Promise<void> {
  const store = SqliteStore.open({ durability: "process-crash-safe", pollIntervalMs: 20, ...options.storeOptions, path: options.storePath });
  await runWorkerProcessOnStore(store, options);
}

/**
 * {@link runWorkerProcess} on a store the caller opened (such as PostgreSQL):
 * starts a Worker, prints the ready line, drains and closes the store on
 * SIGTERM, and exits when the parent dies.
 */
export async function runWorkerProcessOnStore(
  store: Store,
  options: Pick<RunWorkerProcessOptions, "flows" | "workerOptions" | "readyLinePrefix">,
): Promise<void> {
  const worker = new Worker({ livenessTimeoutMs: 1500, ...options.workerOptions, store, flows: options.flows });
  let closing = false;
  const shutDown = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    try {
      await worker.close();
      await store.close();
      process.exit(0);
    } catch (error) {
      console.error("perdure test worker: close failed:", error);
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutDown());
  process.on("SIGINT", () => void shutDown());
  // Detached children outlive a parent that crashed; leave when reparented.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(2);
  }, 500).unref();
  await worker.start();
  console.log(`${options.readyLinePrefix ?? workerReadyLine} ${worker.workerId}`);
}
