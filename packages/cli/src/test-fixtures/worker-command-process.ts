/**
 * `perdure worker` as a child process for the integration tests: the real
 * CLI on the gated support agent, stopped with SIGTERM or SIGINT, or killed
 * with SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { workerStartedLinePattern } from "../commands/worker.ts";
import { gatedEntryPath, repositoryRoot } from "./dev-server-process.ts";
import { gateDirectoryVariable } from "./gated-support-agent.ts";

const cliPath = fileURLToPath(new URL("../cli.ts", import.meta.url));

/** Options of {@link WorkerCommandProcess.start}. */
export interface WorkerCommandProcessOptions {
  /** The gated agent's FileGate folder. */
  gateDirectory: string;
  /** `perdure worker` options, such as `["--db", path, "--drain-timeout", "500ms"]`. */
  args: readonly string[];
  /** More environment variables, such as `PERDURE_DATABASE_URL`. @default {} */
  env?: Readonly<Record<string, string>>;
}

/** A running `perdure worker`. */
export class WorkerCommandProcess {
  readonly workerId: string;
  readonly pid: number;
  /** The exit code, or the signal's name when a signal ended it. */
  readonly exited: Promise<number | string>;
  private readonly child: ChildProcess;
  private readonly readOutput: () => string;

  private constructor(child: ChildProcess, workerId: string, exited: Promise<number | string>, readOutput: () => string) {
    this.child = child;
    this.pid = child.pid ?? 0;
    this.workerId = workerId;
    this.exited = exited;
    this.readOutput = readOutput;
  }

  /** Everything it printed so far, stdout and stderr together. */
  get output(): string {
    return this.readOutput();
  }

  /** Spawns `node cli.ts worker` and waits for its started line. */
  static async start(options: WorkerCommandProcessOptions): Promise<WorkerCommandProcess> {
    const child = spawn(process.execPath, [cliPath, "worker", ...options.args, gatedEntryPath], {
      cwd: repositoryRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PERDURE_DATABASE_URL: "", [gateDirectoryVariable]: options.gateDirectory, ...options.env },
    });
    let output = "";
    const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
    const started = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`perdure worker did not start within 60 s:\n${output}`)), 60_000);
      const read = (chunk: Buffer): void => {
        output += chunk.toString();
        const match = workerStartedLinePattern.exec(output);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout?.on("data", read);
      child.stderr?.on("data", read);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`perdure worker exited (${code}) before it started:\n${output}`));
      });
    });
    try {
      return new WorkerCommandProcess(child, await started, exited, () => output);
    } catch (error) {
      // A process that never started must not outlive the test: it would keep the test file running.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      throw error;
    }
  }

  /** Sends a signal (SIGTERM, SIGINT, SIGKILL). */
  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Kills it unless it has exited; for test cleanup. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}
