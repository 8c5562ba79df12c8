import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { Client, Worker } from "@perdure/engine";
import { loadAgentFlows } from "../entry/load-agent-flows.ts";
import { allowLoopbackOnly, createDevApp } from "../server/create-dev-app.ts";
import { openConfiguredStore } from "../store/open-configured-store.ts";

/** Options of `perdure dev`. */
export interface DevCommandOptions {
  entry: string;
  port: number;
  host: string;
  databasePath: string;
  databaseUrl: string | undefined;
}

/** The built web UI, next to the package. */
export function defaultWebRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../dist/web");
}

/** A running dev server: store, Worker and HTTP server, stopped together. */
export interface RunningDevServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the embedded (or PostgreSQL) store, a Worker for the entry's agents, and the HTTP API and web UI. */
export async function startDevServer(options: DevCommandOptions): Promise<RunningDevServer> {
  const flows = await loadAgentFlows(options.entry);
  const { store, description } = await openConfiguredStore({ databasePath: options.databasePath, databaseUrl: options.databaseUrl });
  const worker = new Worker({ store, flows: [...flows.values()] });
  await worker.start();
  const client = new Client({ store });
  const webRoot = defaultWebRoot();
  const app = createDevApp({ client, flows, authorize: allowLoopbackOnly, ...(existsSync(join(webRoot, "index.html")) ? { webRoot } : {}) });
  const server = await new Promise<ReturnType<typeof serve>>((resolveServer, reject) => {
    // UI-stream resume tokens ride in a header and may reach 64 KiB; Node's default limit is 16 KiB.
    const started = serve({ fetch: app.fetch, port: options.port, hostname: options.host, serverOptions: { maxHeaderSize: 128 * 1024 } }, () => resolveServer(started));
    started.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  console.log(`perdure dev: ${[...flows.keys()].join(", ")} on ${description}`);
  console.log(`perdure dev: web UI and API at ${url}`);
  return {
    url,
    close: async () => {
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      await worker.close();
      await store.close();
    },
  };
}
