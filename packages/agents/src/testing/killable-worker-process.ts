import { startWorkerProcess, type WorkerProcess } from "@perdure/engine/testing";
import { parseEngineAddress } from "./engine-address.ts";
import { agentWorkerReadyLine, engineAddressEnvironmentVariable } from "./worker-process-protocol.ts";

/** Options of {@link KillableWorkerProcess.start}. */
export interface KillableWorkerProcessOptions {
  /** A TypeScript (or JavaScript) module that calls `runAgentWorkerProcess`. */
  entryModulePath: string;
  /** The engine the child runs on, such as `PrivateEngine`'s `address`; passed as `PERDURE_ENGINE_ADDRESS`. */
  engineAddress: string;
  /**
   * A file the child's stdout and stderr are appended to.
   * @default kept in memory: the last 64 KiB, see `output()`
   */
  logPath?: string;
  /**
   * Added to the parent's environment for the child.
   * @default {}
   */
  environment?: Record<string, string>;
  /**
   * How long to wait for the ready line before killing the child and failing.
   * @default 60_000
   */
  readyTimeoutMs?: number;
}

/**
 * A Worker in a child process of its own process group, for tests that lose
 * a Worker at an exact point: `kill()` SIGKILLs the whole group (no cleanup
 * runs, as when a machine dies), `stop()` drains it with SIGTERM.
 * `start` resolves once the child's Worker is registered.
 *
 * @example
 * const engine = await PrivateEngine.start();
 * const worker = await KillableWorkerProcess.start({
 *   entryModulePath: fileURLToPath(new URL("./agent-worker-main.ts", import.meta.url)),
 *   engineAddress: engine.address,
 * });
 * await gate.waitUntilReached();
 * await worker.kill();
 */
export class KillableWorkerProcess {
  private readonly child: WorkerProcess;

  private constructor(child: WorkerProcess) {
    this.child = child;
  }

  /** Spawns `node <entryModulePath>` and waits for its ready line. */
  static async start(options: KillableWorkerProcessOptions): Promise<KillableWorkerProcess> {
    parseEngineAddress(options.engineAddress);
    const child = await startWorkerProcess({
      entryModulePath: options.entryModulePath,
      env: { ...options.environment, [engineAddressEnvironmentVariable]: options.engineAddress },
      readyLinePrefix: agentWorkerReadyLine,
      ...(options.logPath === undefined ? {} : { logPath: options.logPath }),
      ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    });
    return new KillableWorkerProcess(child);
  }

  /** Process ID of the child, which leads its process group. */
  get pid(): number {
    return this.child.pid;
  }

  /** The Worker ID the child reported in its ready line. */
  get workerId(): string {
    return this.child.workerId;
  }

  /** Resolves with the exit code, or the signal name (`SIGKILL`), once the child exited. */
  get exited(): Promise<number | string> {
    return this.child.exited;
  }

  /** SIGKILLs the whole process group and waits for the child to exit. */
  kill(): Promise<void> {
    return this.child.kill();
  }

  /**
   * SIGTERM: the child drains its Worker (running attempts commit), closes the
   * store and exits 0; after `timeoutMs` it is SIGKILLed instead. Resolves with
   * the exit code or signal name.
   * @param options.timeoutMs @default 10_000
   */
  stop(options: { timeoutMs?: number } = {}): Promise<number | string> {
    return this.child.stop(options);
  }

  /** The last 64 KiB of the child's stdout and stderr (empty when `logPath` was given). */
  output(): string {
    return this.child.output();
  }
}
