/**
 * Starts the test notes server (see `notes-mcp-server.ts`) for a test: its
 * stdio config, or a Streamable HTTP child process on a free loopback port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestContext } from "node:test";
import { InvocationLog } from "../../testing/invocation-log.ts";
import type { McpStdioServerConfig, McpStreamableHttpServerConfig } from "../mcp-server-config.ts";

export const notesServerPath = fileURLToPath(new URL("./notes-mcp-server.ts", import.meta.url));

/** A folder for the server's log and gates, removed after the test. */
export interface NotesServerFolder {
  directory: string;
  log: InvocationLog;
  environment: Record<string, string>;
}

export function notesServerFolder(t: TestContext, extra: Record<string, string> = {}): NotesServerFolder {
  const directory = mkdtempSync(join(tmpdir(), "perdure-mcp-test-"));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const logPath = join(directory, "server.log");
  return { directory, log: new InvocationLog(logPath), environment: { NOTES_MCP_LOG: logPath, NOTES_MCP_GATES: directory, ...extra } };
}

/** The stdio config of the notes server. */
export function notesStdioServer(folder: NotesServerFolder, name = "notes", extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { transport: "stdio", name, command: process.execPath, args: ["--conditions=perdure-source", notesServerPath, "stdio"], env: folder.environment, ...extra };
}

/** A running Streamable HTTP notes server. */
export interface NotesHttpServer {
  config: McpStreamableHttpServerConfig;
  process: ChildProcess;
  port: number;
  kill(): Promise<void>;
}

export async function startNotesHttpServer(t: TestContext, folder: NotesServerFolder, name = "notes", port?: number, mode: "http" | "http-stateless" = "http"): Promise<NotesHttpServer> {
  // Without a port the server binds one the system picks and names it: a port found free beforehand could be
  // taken by a test running beside this one before the server binds it (a clean-clone run saw EADDRINUSE).
  const child = spawn(process.execPath, ["--conditions=perdure-source", notesServerPath, mode, String(port ?? 0)], { env: { ...process.env, ...folder.environment }, stdio: ["ignore", "pipe", "inherit"] });
  const chosenPort = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the notes HTTP server exited with ${String(code)} before it listened`)));
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (\d+)/.exec(output);
      if (listening !== null) resolve(Number(listening[1]));
    });
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  t.after(kill);
  return { config: { transport: "streamable_http", name, url: `http://127.0.0.1:${chosenPort}/mcp` }, process: child, port: chosenPort, kill };
}
