import { existsSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serve, type HttpBindings } from "@hono/node-server";
import { describeAgentSessionModel } from "@perdure/agents";
import { Client, Worker } from "@perdure/engine";
import type { Hono } from "hono";
import { loadAgentFlows } from "../entry/load-agent-flows.ts";
import { startIdleMemoryRelease } from "../server/idle-memory-release.ts";
import { startYoungGenerationCap } from "../server/young-generation-cap.ts";
import { hasUnreadBody, settleRefusedUpload, withConnectionClose } from "../server/close-refused-upload.ts";
import { allowedHostsFor, generateAccessToken, isLoopbackHost } from "../server/dev-access.ts";
import { createDevApp } from "../server/create-dev-app.ts";
import { openConfiguredStore } from "../store/open-configured-store.ts";
import { startDevTracing } from "./dev-tracing.ts";
import { createCliLogger } from "../logging/cli-logger.ts";
import type { LogFormat } from "../logging/log-format.ts";
import { workerReadiness } from "./worker.ts";
import { startOperationsServer } from "../operations/operations-server.ts";
import { startPrometheusMetrics } from "../operations/prometheus-metrics.ts";

/** Options of `perdure dev`. */
export interface DevCommandOptions {
  entry: string;
  port: number;
  host: string;
  databasePath: string;
  databaseUrl: string | undefined;
  /**
   * The access token (`--token-file`, `PERDURE_DEV_TOKEN` or `--token`).
   * Required for a non-loopback host; one is generated and printed when
   * absent there. A given token is never printed.
   * @default none on loopback: loopback callers only
   */
  token?: string | undefined;
  /** `--allow-origin`: separate front ends that may call the API. @default [] */
  allowedOrigins?: readonly string[] | undefined;
  /** `--metrics-port`: where `/metrics`, `/healthz` and `/readyz` listen. @default none */
  operations?: { port: number; host: string; token: string | undefined } | undefined;
  /** How log entries are written (see `createCliLogger`). @default "pretty" */
  logFormat?: LogFormat;
}

/** The built web UI: `dist/web` of the package, seen from the sources or from the built `dist/commands`. */
export function defaultWebRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, "../../dist/web"), resolve(here, "../web")];
  return candidates.find((candidate) => existsSync(join(candidate, "index.html"))) ?? candidates[0] ?? "";
}

/** A running dev server: store, Worker and HTTP server, stopped together. */
export interface RunningDevServer {
  /** The address to open, with `?token=` when the token was generated for this run. */
  url: string;
  close(): Promise<void>;
}

/** The port `perdure dev` could not listen on, with what to do. */
export class DevServerListenError extends Error {}

type DevHttpServer = ReturnType<typeof serve>;

/** How long after the announced keep-alive timeout (5 s) the server closes an idle connection. */
const keepAliveTimeoutBufferMs = 10_000;

/**
 * Listens before anything else starts, so that a busy port fails the command
 * with no store opened and no Worker running. Requests that arrive before the
 * app is ready get a 503.
 */
async function listen(options: DevCommandOptions, handle: { app: Hono | undefined }): Promise<{ server: DevHttpServer; port: number }> {
  return new Promise((resolveListen, reject) => {
    const server = serve(
      {
        fetch: async (request, env) => {
          const response = handle.app === undefined ? Response.json({ error: "perdure dev is starting; retry shortly" }, { status: 503 }) : await handle.app.fetch(request, env);
          // An HTTP/1.1 server: its requests are node:http IncomingMessages.
          const { incoming } = env as HttpBindings;
          if (response.status < 400 || !hasUnreadBody(incoming)) return response;
          // The rest of a small refused body is read first: its client then reads the answer, and may reuse the connection.
          if (await settleRefusedUpload(incoming) === "ended") return response;
          return await withConnectionClose(response);
        },
        // Refused uploads are bounded by settleRefusedUpload (4 MiB), not drained up to 64 MiB.
        autoCleanupIncoming: false,
        port: options.port,
        hostname: options.host,
        // UI-stream resume tokens ride in a header and may reach 64 KiB; Node's default limit is 16 KiB.
        serverOptions: { maxHeaderSize: 128 * 1024 },
      },
      (info: AddressInfo) => resolveListen({ server, port: info.port }),
    );
    // Clients drop an idle connection by the `Keep-Alive: timeout=5` the server announces; the server
    // closes it this much later, so a client whose timer runs late on a busy machine never sends a
    // request on a connection the server is closing (which fails with "other side closed").
    (server as { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer = keepAliveTimeoutBufferMs;
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new DevServerListenError(`port ${options.port} on ${options.host} is in use (is another perdure dev running?); pick another with --port`));
      else if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND") reject(new DevServerListenError(`cannot listen on host ${options.host}: ${error.message}; pass a local address with --host`));
      else reject(error);
    });
  });
}

function closeServer(server: DevHttpServer): Promise<void> {
  return new Promise((resolveClose) => server.close(() => resolveClose()));
}

/** Starts the embedded (or PostgreSQL) store, a Worker for the entry's agents, and the HTTP API and web UI. */
export async function startDevServer(options: DevCommandOptions): Promise<RunningDevServer> {
  const flows = await loadAgentFlows(options.entry);
  // Before anything listens or opens: a malformed endpoint fails the command at once.
  const tracing = await startDevTracing();
  const isTokenGiven = options.token !== undefined && options.token !== "";
  const token = isTokenGiven ? options.token ?? null : isLoopbackHost(options.host) ? null : generateAccessToken();
  const handle: { app: Hono | undefined } = { app: undefined };
  const { server, port } = await listen(options, handle);
  const memoryRelease = startIdleMemoryRelease(server as Server);
  const youngGenerationCap = startYoungGenerationCap();
  let opened: Awaited<ReturnType<typeof openConfiguredStore>>;
  try {
    opened = await openConfiguredStore({ databasePath: options.databasePath, databaseUrl: options.databaseUrl });
  } catch (error) {
    memoryRelease.stop();
    youngGenerationCap.stop();
    await closeServer(server);
    throw error;
  }
  const { store, description } = opened;
  const metrics = options.operations === undefined ? undefined : startPrometheusMetrics();
  const logger = createCliLogger({ name: "perdure dev", format: options.logFormat ?? "pretty" });
  const worker = new Worker({
    store,
    flows: [...flows.values()],
    logger,
    ...(metrics === undefined ? {} : { meterProvider: metrics.meterProvider }),
  });
  await worker.start();
  const operations = options.operations === undefined || metrics === undefined ? undefined
    : await startOperationsServer({ ...options.operations, handleScrape: (request, response) => metrics.handleScrape(request, response), readiness: () => workerReadiness(new Client({ store }), worker) });
  const webRoot = defaultWebRoot();
  handle.app = createDevApp({
    client: new Client({ store }),
    flows,
    access: { token, port },
    allowedHosts: allowedHostsFor(options.host, port),
    allowedOrigins: options.allowedOrigins ?? [],
    ...(existsSync(join(webRoot, "index.html")) ? { webRoot } : {}),
    logger,
    worker,
  });
  const displayHost = allowedHostsFor(options.host, port) === "any" ? "127.0.0.1" : options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  // Only a generated token goes into the printed address: a given one may sit in shared logs and terminals.
  const url = `http://${displayHost}:${port}${token === null || isTokenGiven ? "" : `/?token=${encodeURIComponent(token)}`}`;
  console.log(`perdure dev: ${[...flows.keys()].join(", ")} on ${description}`);
  for (const [flowType, flow] of flows) console.log(`perdure dev: ${flowType} uses ${describeAgentSessionModel(flow) ?? "a model its runner does not describe"}`);
  if (tracing !== undefined) console.log(`perdure dev: exporting spans over OTLP/HTTP to ${tracing.endpoint}`);
  console.log(`perdure dev: web UI and API at ${url}`);
  if (operations !== undefined) console.log(`perdure dev: metrics at ${operations.url}/metrics, health at ${operations.url}/healthz and ${operations.url}/readyz`);
  if (isTokenGiven) console.log("perdure dev: open the address with ?token=<your access token> once, or send Authorization: Bearer <your access token>");
  else if (token !== null) console.log("perdure dev: the access token was generated for this run; set PERDURE_DEV_TOKEN or --token-file to keep one");
  return {
    url,
    close: async () => {
      memoryRelease.stop();
      youngGenerationCap.stop();
      await closeServer(server);
      await operations?.close();
      await worker.close();
      await store.close();
      await metrics?.shutdown();
      await tracing?.shutdown();
    },
  };
}
