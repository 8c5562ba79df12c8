/**
 * Restate (`@restatedev/restate-server` and `@restatedev/restate-sdk`) as a
 * {@link WorkloadSystem}: a service handler that runs N no-op `ctx.run`
 * blocks, called through the ingress with the flow ID as its idempotency
 * key and awaited to its result. The server is the npm package's binary,
 * started here on loopback ports with its data in a temporary folder (its
 * default, development configuration: one node, RocksDB with fsync); the
 * SDK endpoint is an HTTP/2 server in this process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer as createHttp2Server, type Http2Server } from "node:http2";
import { createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as restate from "@restatedev/restate-sdk";
import * as clients from "@restatedev/restate-sdk-clients";
import type { WorkloadSystem } from "./workload.ts";

const chain = restate.service({
  name: "PerdureBenchChain",
  handlers: {
    run: async (context: restate.Context, steps: number): Promise<number> => {
      for (let index = 0; index < steps; index++) await context.run(`noop-${index}`, () => undefined);
      return steps;
    },
  },
});

/** A port nobody listens on now, on loopback. */
async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no free loopback port");
  return address.port;
}

function restateServerBinary(): string {
  const require = createRequire(import.meta.url);
  return require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

async function waitForHealth(url: string, server: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`restate-server exited with ${server.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`restate-server did not answer ${url} within 60 s:\n${output()}`);
    await sleep(100);
  }
}

/** A running Restate server with this process's SDK endpoint registered. */
export interface RunningRestate {
  ingressUrl: string;
  /** The server package's version, such as "1.7.12". */
  version: string;
  /** The server's data folder. */
  folder: string;
  stop(): Promise<void>;
}

/**
 * Starts a Restate server (the npm package's binary) on loopback ports with
 * its data in a temporary folder, serves `services` from an HTTP/2 endpoint
 * in this process and registers it.
 */
export async function startRestate(services: Parameters<typeof restate.createEndpointHandler>[0]["services"]): Promise<RunningRestate> {
  const folder = mkdtempSync(join(tmpdir(), "perdure-bench-restate-"));
  const [ingressPort, adminPort, fabricPort] = [await freePort(), await freePort(), await freePort()];
  let output = "";
  const server = spawn(restateServerBinary(), ["--no-logo", "--base-dir", folder, "--listen-mode", "tcp", "--node-name", "bench"], {
    env: {
      ...process.env,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
      RESTATE_BIND_ADDRESS: `127.0.0.1:${fabricPort}`,
      RESTATE_DISABLE_TELEMETRY: "true",
      DO_NOT_TRACK: "1",
      RESTATE_LOG_FILTER: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  server.stdout?.on("data", keep);
  server.stderr?.on("data", keep);
  // A bench that dies takes its server with it.
  const killOnExit = (): void => {
    server.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  // Warnings and errors only: the SDK logs every invocation at INFO, which would be bench-process work Perdure and DBOS do not do.
  const logger: restate.LoggerTransport = (meta, message, ...rest: unknown[]) => {
    if (String(meta.level) === "warn" || String(meta.level) === "error") console.error(`[restate sdk] ${String(message)}`, ...rest);
  };
  let endpoint: Http2Server | undefined;
  const stop = async (): Promise<void> => {
    const listening = endpoint;
    if (listening?.listening === true) await new Promise<void>((resolve) => listening.close(() => resolve()));
    if (server.exitCode === null) {
      const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
      server.kill("SIGTERM");
      await Promise.race([exited, sleep(10_000)]);
      if (server.exitCode === null) server.kill("SIGKILL");
    }
    process.off("exit", killOnExit);
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const created = createHttp2Server(restate.createEndpointHandler({ services, logger }));
    endpoint = created;
    await new Promise<void>((resolve) => created.listen(0, "127.0.0.1", resolve));
    const endpointAddress = created.address();
    if (endpointAddress === null || typeof endpointAddress === "string") throw new Error("the Restate endpoint has no port");
    await waitForHealth(`http://127.0.0.1:${adminPort}/health`, server, () => output);
    const registered = await fetch(`http://127.0.0.1:${adminPort}/deployments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uri: `http://127.0.0.1:${endpointAddress.port}` }),
    });
    if (!registered.ok) throw new Error(`registering the Restate endpoint failed: ${registered.status} ${await registered.text()}`);
    await waitForHealth(`http://127.0.0.1:${ingressPort}/restate/health`, server, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  const version = (createRequire(import.meta.url)("@restatedev/restate-server/package.json") as { version: string }).version;
  return { ingressUrl: `http://127.0.0.1:${ingressPort}`, version, folder, stop };
}

/** Starts a Restate server and the SDK endpoint, registers the endpoint, and returns the system. */
export async function openRestate(): Promise<WorkloadSystem> {
  const running = await startRestate([chain]);
  const { version } = running;
  const ingress = clients.connect({ url: running.ingressUrl });
  return {
    name: `Restate ${version.split(".").slice(0, 2).join(".")}`,
    async runFlow(flowId, steps) {
      const result = await ingress.serviceClient(chain).run(steps, clients.rpc.opts({ idempotencyKey: flowId }));
      if (result !== steps) throw new Error(`Restate invocation ${flowId} returned ${String(result)}, expected ${steps}`);
    },
    close: () => running.stop(),
  };
}
