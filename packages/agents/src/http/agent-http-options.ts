/**
 * The options of `createAgentHttpHandler` and the one function that checks
 * them and fills in their defaults.
 */
import { describeValue, InvalidInputError, type Client, type PerdureLogger } from "@perdure/engine";
import type { AgentSessionFlow } from "../session/create-agent-session-flow.ts";
import type { AgentHttpAction } from "./agent-http-actions.ts";

/** Who is calling, as `authorize` established it. */
export interface AgentHttpCaller {
  /**
   * A stable name of the caller (a user ID, an API key's owner). A session
   * records the principal that created it; only that principal reaches it.
   */
  principal: string;
}

/** What `authorize` is asked about. */
export interface AgentHttpAuthorizeRequest {
  request: Request;
  /** The route's operation ID, as in the OpenAPI document (`createSession`, `decideApproval`, …). */
  action: AgentHttpAction;
  /** The session the path names; absent for routes whose session is in the body (`sendChatMessage`) or that name none. */
  sessionId?: string;
}

/**
 * Decides who the caller is: returns the caller, or a `Response` that
 * refuses the request (a 401 with a `WWW-Authenticate` header, a redirect to
 * a sign-in page). It runs before the body is read. The handler itself then
 * checks that the session belongs to the caller's principal.
 */
export type AgentHttpAuthorize = (request: AgentHttpAuthorizeRequest) => AgentHttpCaller | Response | Promise<AgentHttpCaller | Response>;

/** Size limits of what the handler reads. */
export interface AgentHttpLimits {
  /**
   * The largest body of `POST /chat`: the `useChat` request with its last message.
   * @default 1048576 (1 MiB)
   */
  maxChatBodyBytes?: number;
  /**
   * The largest body of every other state-changing route.
   * @default 65536 (64 KiB)
   */
  maxBodyBytes?: number;
  /**
   * The most sessions `GET /sessions` returns.
   * @default 500
   */
  maxListedSessions?: number;
}

/** Options of `createAgentHttpHandler`. */
export interface AgentHttpHandlerOptions {
  /** The Client the routes read and write sessions with. */
  client: Client;
  /** The agent session Flows served; the first is the default agent of new sessions. */
  flows: readonly AgentSessionFlow[] | ReadonlyMap<string, AgentSessionFlow>;
  /**
   * Who the caller is, for every request that reads or changes agents or
   * sessions (`GET /health` and `GET /openapi.json` are public).
   * `"anyone-on-loopback"` admits every caller as the principal `"local"`:
   * for a server that listens on a loopback address only, such as
   * `perdure dev`; it requires `allowedHosts` to name loopback hosts only,
   * which stops DNS-rebinding pages.
   */
  authorize: AgentHttpAuthorize | "anyone-on-loopback";
  /**
   * The path the routes sit under, such as `/api`; paths outside it answer 404.
   * @default "" (the routes sit at the root)
   */
  basePath?: string;
  /**
   * The `Host` header values served (`name:port` as a browser sends it);
   * others get a 421. `"any"` turns the check off, which is safe only when
   * `authorize` checks a credential a rebinding page cannot send (a bearer
   * token, a cookie of your own host name).
   * @default "any" with an `authorize` function; required with "anyone-on-loopback"
   */
  allowedHosts?: readonly string[] | "any";
  /**
   * Origins of separate front ends that may call the API: CORS with
   * credentials, and the same-origin guard admits them.
   * @default []
   */
  allowedOrigins?: readonly string[];
  /**
   * Whether sessions that record no principal (started by code with
   * `client.start`, by `perdure chat`, or before the handler recorded
   * owners) are served to every caller.
   * @default true with "anyone-on-loopback", false otherwise
   */
  serveUnownedSessions?: boolean;
  limits?: AgentHttpLimits;
  /**
   * Whether `GET /sessions/:id/events` adds the opt-in frames that carry
   * when each event was written (the `perdure dev` Events tab shows them).
   * @default false
   */
  includeEventWriteTimes?: boolean;
  /**
   * What `/readyz` checks besides the store and its schema: the Worker this
   * process runs beside the handler, ready only while it claims work.
   * @default no Worker check
   */
  readiness?: { worker?: { readonly isClaiming: boolean } };
  /**
   * The structured logger (pino, or any `PerdureLogger`) for unexpected
   * errors and for the health checks' failures.
   * @default none: errors go to `console.error`
   */
  logger?: PerdureLogger;
  /**
   * Called with each unexpected error, which the caller sees only as a 500
   * without details.
   * @default `logger.error` with the method and path, else console.error
   */
  onUnexpectedError?: (error: unknown, request: Request) => void;
}

function readinessWorkerOf(readiness: AgentHttpHandlerOptions["readiness"]): { readonly isClaiming: boolean } | undefined {
  if (readiness === undefined) return undefined;
  if (readiness === null || typeof readiness !== "object") throw new InvalidInputError(`readiness ${describeValue(readiness)} is invalid: use { worker } with the Worker this process runs, or leave it out`);
  const worker = readiness.worker;
  if (worker !== undefined && typeof (worker as { isClaiming?: unknown } | null)?.isClaiming !== "boolean") {
    throw new InvalidInputError(`readiness.worker ${describeValue(worker)} is invalid: pass the Worker (an object with an isClaiming boolean)`);
  }
  return worker;
}

function unexpectedErrorLogOf(logger: PerdureLogger | undefined): (error: unknown, request: Request) => void {
  if (logger === undefined) return (error) => console.error("perdure http:", error);
  return (error, request) => logger.error({ err: error, method: request.method, path: new URL(request.url).pathname }, "unexpected error answered with 500");
}

/** The options with every default filled in. */
export interface ResolvedAgentHttpHandlerOptions {
  client: Client;
  flows: ReadonlyMap<string, AgentSessionFlow>;
  defaultFlow: AgentSessionFlow;
  authorize: AgentHttpAuthorize;
  basePath: string;
  allowedHosts: readonly string[] | "any";
  allowedOrigins: readonly string[];
  serveUnownedSessions: boolean;
  includeEventWriteTimes: boolean;
  maxChatBodyBytes: number;
  maxBodyBytes: number;
  maxListedSessions: number;
  onUnexpectedError: (error: unknown, request: Request) => void;
  logger: PerdureLogger | undefined;
  /** The Worker `/readyz` checks, and whether the last answer was ready (to log each change once). */
  readiness: { worker: { readonly isClaiming: boolean } | undefined; state: { wasReady: boolean | undefined } };
}

/** The principal of every caller under `authorize: "anyone-on-loopback"`. */
export const loopbackPrincipal = "local";

const loopbackHostPattern = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i;

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) throw new InvalidInputError(`limits.${name} ${describeValue(value)} is invalid: use a positive integer`);
  return value;
}

function flowsByType(flows: AgentHttpHandlerOptions["flows"]): ReadonlyMap<string, AgentSessionFlow> {
  const entries = flows instanceof Map ? [...(flows as ReadonlyMap<string, AgentSessionFlow>).entries()] : Array.isArray(flows) ? (flows as readonly AgentSessionFlow[]).map((flow) => [flow.flowType, flow] as const) : undefined;
  if (entries === undefined) throw new InvalidInputError(`flows ${describeValue(flows)} is invalid: pass the agent session Flows as an array or a Map by Flow type`);
  const byType = new Map<string, AgentSessionFlow>();
  for (const [flowType, flow] of entries) {
    if (byType.has(flowType)) throw new InvalidInputError(`two agents have the Flow type ${describeValue(flowType)}: give each agent its own Flow type`);
    byType.set(flowType, flow);
  }
  return byType;
}

function checkBasePath(basePath: unknown): string {
  if (basePath === undefined || basePath === "" || basePath === "/") return "";
  if (typeof basePath !== "string" || !/^(?:\/[A-Za-z0-9._~-]+)+$/.test(basePath)) {
    throw new InvalidInputError(`basePath ${describeValue(basePath)} is invalid: use a path such as "/api", starting with "/" and not ending with one`);
  }
  return basePath;
}

/** Checks the options and fills in their defaults; an invalid option fails here, before anything is served. */
export function resolveAgentHttpHandlerOptions(options: AgentHttpHandlerOptions): ResolvedAgentHttpHandlerOptions {
  const flows = flowsByType(options.flows);
  const defaultFlow = [...flows.values()][0];
  if (defaultFlow === undefined) throw new InvalidInputError("flows is empty: pass at least one agent session Flow");
  const allowedOrigins = options.allowedOrigins ?? [];
  if (!Array.isArray(allowedOrigins) || !allowedOrigins.every((origin) => typeof origin === "string" && /^https?:\/\/[^/]+$/.test(origin))) {
    throw new InvalidInputError(`allowedOrigins ${describeValue(allowedOrigins)} is invalid: list origins such as "http://localhost:5173", without a path`);
  }
  const { authorize } = options;
  let allowedHosts = options.allowedHosts;
  let resolvedAuthorize: AgentHttpAuthorize;
  if (authorize === "anyone-on-loopback") {
    if (allowedHosts === undefined || allowedHosts === "any" || !Array.isArray(allowedHosts) || allowedHosts.length === 0 || !allowedHosts.every((host) => typeof host === "string" && loopbackHostPattern.test(host))) {
      throw new InvalidInputError(`authorize "anyone-on-loopback" needs allowedHosts naming loopback hosts only, such as ["127.0.0.1:4100", "localhost:4100"]; got ${describeValue(allowedHosts)}`);
    }
    resolvedAuthorize = () => ({ principal: loopbackPrincipal });
  } else if (typeof authorize === "function") {
    resolvedAuthorize = authorize;
  } else {
    throw new InvalidInputError(`authorize ${describeValue(authorize)} is invalid: pass a function that returns the caller ({ principal }) or a refusing Response; "anyone-on-loopback" serves everyone as one user and suits only a server on a loopback address`);
  }
  allowedHosts ??= "any";
  if (allowedHosts !== "any" && (!Array.isArray(allowedHosts) || !allowedHosts.every((host) => typeof host === "string" && host !== ""))) {
    throw new InvalidInputError(`allowedHosts ${describeValue(allowedHosts)} is invalid: list Host header values such as "app.example.com", or pass "any"`);
  }
  const limits = options.limits ?? {};
  return {
    client: options.client,
    flows,
    defaultFlow,
    authorize: resolvedAuthorize,
    basePath: checkBasePath(options.basePath),
    allowedHosts,
    allowedOrigins,
    serveUnownedSessions: options.serveUnownedSessions ?? authorize === "anyone-on-loopback",
    includeEventWriteTimes: options.includeEventWriteTimes === true,
    maxChatBodyBytes: positiveInteger(limits.maxChatBodyBytes, "maxChatBodyBytes", 1024 * 1024),
    maxBodyBytes: positiveInteger(limits.maxBodyBytes, "maxBodyBytes", 64 * 1024),
    maxListedSessions: positiveInteger(limits.maxListedSessions, "maxListedSessions", 500),
    onUnexpectedError: options.onUnexpectedError ?? unexpectedErrorLogOf(options.logger),
    logger: options.logger,
    readiness: { worker: readinessWorkerOf(options.readiness), state: { wasReady: undefined } },
  };
}
