/**
 * `perdure dev` as a child process leading its own process group, for the
 * integration tests: the real CLI on a temporary store, killed with SIGKILL
 * or stopped with SIGTERM.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gateDirectoryVariable } from "./gated-support-agent.ts";

export const repositoryRoot = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));
const cliPath = fileURLToPath(new URL("../cli.ts", import.meta.url));
/** The gated support agent: the demo agent whose answers and tools pause at FileGates. */
export const gatedEntryPath = fileURLToPath(new URL("./gated-support-agent.ts", import.meta.url));
/** The entry `npm start` runs: the example support agent on the demo model, with the notes MCP server. */
export const demoEntryPath = resolve(repositoryRoot, "perdure.agents.ts");

/** Options of {@link DevServerProcess.start}. */
export interface DevServerProcessOptions {
  port: number;
  databasePath: string;
  /** The gated agent's FileGate folder. */
  gateDirectory: string;
  /** More `perdure dev` options, such as `["--host", "0.0.0.0"]`. @default [] */
  args?: readonly string[];
  /** More environment variables. @default {} */
  env?: Readonly<Record<string, string>>;
  /** The entry module to serve. @default the gated support agent ({@link gatedEntryPath}) */
  entry?: string;
}

/** `perdure dev` as a child process leading its own process group. */
export class DevServerProcess {
  /** The address the server printed (with `?token=` when it needs one). */
  readonly url: string;
  private readonly child: ChildProcess;
  private readonly processGroup: number;
  private readonly exited: Promise<void>;
  private readonly output: () => string;

  private constructor(child: ChildProcess, processGroup: number, url: string, exited: Promise<void>, output: () => string) {
    this.child = child;
    this.processGroup = processGroup;
    this.url = url;
    this.exited = exited;
    this.output = output;
  }

  /** Spawns `node cli.ts dev` and waits for the line with its URL; kills the group when that fails. */
  static async start(options: DevServerProcessOptions): Promise<DevServerProcess> {
    const child = spawn(process.execPath, [cliPath, "dev", "--port", String(options.port), "--db", options.databasePath, ...(options.args ?? []), options.entry ?? gatedEntryPath], {
      cwd: repositoryRoot,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PERDURE_DATABASE_URL: "", PERDURE_DEV_TOKEN: "", [gateDirectoryVariable]: options.gateDirectory, ...options.env },
    });
    let output = "";
    let exitCode: number | null = null;
    const exited = new Promise<void>((resolveExit) => child.once("exit", (code) => {
      exitCode = code;
      resolveExit();
    }));
    const url = new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`perdure dev printed no URL within 30 s:\n${output}`)), 30_000);
      const read = (chunk: Buffer): void => {
        output += chunk.toString();
        const match = /web UI and API at (http:\/\/\S+)/.exec(output);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolveUrl(match[1]);
        }
      };
      child.stdout?.on("data", read);
      child.stderr?.on("data", read);
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`perdure dev exited with code ${String(exitCode)} before printing its URL:\n${output}`));
      });
    });
    const processGroup = child.pid;
    if (processGroup === undefined) {
      await url; // Rejects with the spawn error.
      throw new Error("perdure dev started without a process ID");
    }
    try {
      return new DevServerProcess(child, processGroup, await url, exited, () => output);
    } catch (error) {
      await new DevServerProcess(child, processGroup, "", exited, () => output).kill();
      throw error;
    }
  }

  /** The server's origin, without the token. */
  get origin(): string {
    return new URL(this.url).origin;
  }

  /** The server process's ID, for reading its memory. */
  get pid(): number {
    return this.processGroup;
  }

  get log(): string {
    return this.output();
  }

  private get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.processGroup, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }

  /** SIGKILLs the whole process group, as when the machine dies, and waits for the exit. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signal("SIGKILL");
    await this.exited;
  }

  /** Stops the server with SIGTERM, killing the group when it does not exit within 10 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}
