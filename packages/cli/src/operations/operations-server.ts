/**
 * The operations endpoints of `perdure worker` and `perdure dev`
 * (`--metrics-port`): `/metrics` in the Prometheus format, `/healthz` (the
 * process answers) and `/readyz` (the store answers and the Worker claims).
 * They listen on loopback by default; any other address needs a bearer
 * token. Every request is checked before anything is read: GET or HEAD
 * only, a known Host (no DNS rebinding), no browser Origin, a bounded URL.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { allowedHostsFor, isLoopbackHost, isSameToken } from "../server/dev-access.ts";

/** What `/readyz` reports. */
export interface ReadinessReport {
  ready: boolean;
  /** Each check by name: `ok`, or why it failed. */
  checks: Record<string, string>;
}

/** Options of {@link startOperationsServer}. */
export interface OperationsServerOptions {
  port: number;
  host: string;
  /** The bearer token every request must carry; required unless `host` is a loopback address. */
  token: string | undefined;
  readiness: () => Promise<ReadinessReport>;
  handleScrape: (request: IncomingMessage, response: ServerResponse) => void;
}

/** A listening operations server. */
export interface RunningOperationsServer {
  /** Its base address, such as `http://127.0.0.1:9464`. */
  url: string;
  close(): Promise<void>;
}

const maxUrlLength = 2048;

function refuse(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers });
  response.end(`${message}\n`);
}

/** Why a request may not be served, or undefined when it may. */
function checkRequest(request: IncomingMessage, allowedHosts: readonly string[] | "any", token: string | undefined): { status: number; message: string; headers?: Record<string, string> } | undefined {
  if ((request.url ?? "").length > maxUrlLength) return { status: 414, message: `the URL is longer than ${maxUrlLength} characters` };
  if (request.method !== "GET" && request.method !== "HEAD") return { status: 405, message: `${request.method ?? "?"} is not served here: use GET`, headers: { allow: "GET, HEAD" } };
  const host = (request.headers.host ?? "").toLowerCase();
  if (allowedHosts !== "any" && !allowedHosts.includes(host)) return { status: 421, message: `Host ${JSON.stringify(host)} is not served here` };
  // No page in a browser has a reason to read these; a scraper or a probe sends no Origin.
  if (request.headers.origin !== undefined) return { status: 403, message: `requests from web pages (Origin ${JSON.stringify(request.headers.origin)}) are refused` };
  if (token !== undefined) {
    const presented = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
    if (!isSameToken(presented, token)) return { status: 401, message: "give the metrics token as Authorization: Bearer <token>", headers: { "www-authenticate": "Bearer" } };
  }
  return undefined;
}

/** Runs `readiness`, reporting a check that does not answer within `timeoutMs` as unready. */
async function readinessWithin(readiness: () => Promise<ReadinessReport>, timeoutMs: number): Promise<ReadinessReport> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ReadinessReport>((resolve) => {
    timer = setTimeout(() => resolve({ ready: false, checks: { readiness: `no answer within ${timeoutMs} ms` } }), timeoutMs);
  });
  try {
    return await Promise.race([readiness().catch((error: unknown) => ({ ready: false, checks: { readiness: error instanceof Error ? error.message : String(error) } })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Listens and serves `/metrics`, `/healthz` and `/readyz`. Refuses a non-loopback host without a token. */
export async function startOperationsServer(options: OperationsServerOptions): Promise<RunningOperationsServer> {
  if (!isLoopbackHost(options.host) && (options.token === undefined || options.token === "")) {
    throw new Error(`--metrics-host ${options.host} is not a loopback address: give --metrics-token (or PERDURE_METRICS_TOKEN) so that only your scraper can read the endpoints`);
  }
  let allowedHosts: readonly string[] | "any" = [];
  const server: Server = createServer((request, response) => {
    const refusal = checkRequest(request, allowedHosts, options.token);
    if (refusal !== undefined) {
      refuse(response, refusal.status, refusal.message, refusal.headers);
      return;
    }
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/metrics") {
      options.handleScrape(request, response);
      return;
    }
    if (path === "/healthz") {
      refuse(response, 200, "ok");
      return;
    }
    if (path === "/readyz") {
      void readinessWithin(options.readiness, 2000).then((report) => {
        response.writeHead(report.ready ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" });
        response.end(`${JSON.stringify(report)}\n`);
      });
      return;
    }
    refuse(response, 404, `no such endpoint: use /metrics, /healthz or /readyz`);
  });
  // Nothing here reads a body; a client that sends one gets its connection closed after the answer.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  server.maxHeadersCount = 64;
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(error.code === "EADDRINUSE" ? new Error(`--metrics-port ${options.port} on ${options.host} is in use; pick another`) : error);
    });
    server.listen(options.port, options.host, () => resolve((server.address() as AddressInfo).port));
  });
  allowedHosts = allowedHostsFor(options.host, port);
  const displayHost = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  return {
    url: `http://${displayHost}:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
