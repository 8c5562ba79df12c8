/**
 * `/healthz` and `/readyz`: the probes a load balancer or an orchestrator
 * calls. Public like `/health`, and they say no more than which check
 * failed; the reason goes to the handler's logger, once per change.
 */
import type { AgentHttpRoute } from "../agent-http-route.ts";
import type { ResolvedAgentHttpHandlerOptions } from "../agent-http-options.ts";

/** A check that takes longer than this counts as failed. */
const readinessCheckTimeoutMs = 2000;

/** PostgreSQL's "undefined table": the store answers but its schema is missing. */
const undefinedTableCode = "42P01";

function withTimeout<TResult>(work: Promise<TResult>, description: string): Promise<TResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${description} took longer than ${readinessCheckTimeoutMs} ms`)), readinessCheckTimeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function isUnmigratedSchema(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === undefinedTableCode || (error instanceof Error && /no such table|does not exist/i.test(error.message));
}

/** The checks of `/readyz`, each `ok` or a short reason without details. */
async function readinessChecks(options: ResolvedAgentHttpHandlerOptions): Promise<{ checks: Record<string, string>; failure: unknown }> {
  const checks: Record<string, string> = {};
  let failure: unknown;
  try {
    // A read of the flows table: it answers only when the store is reachable and its schema exists.
    await withTimeout(options.client.listFlows({ limit: 1 }), "reading the store");
    checks.store = "ok";
    checks.schema = "ok";
  } catch (error) {
    failure = error;
    if (isUnmigratedSchema(error)) {
      checks.store = "ok";
      checks.schema = "not migrated: run perdure migrate";
    } else {
      checks.store = "unreachable";
      checks.schema = "unknown";
    }
  }
  const worker = options.readiness.worker;
  if (worker !== undefined) checks.worker = worker.isClaiming ? "ok" : "not claiming";
  return { checks, failure };
}

/** Logs a readiness change once: the first failed check with its reason, and the return to ready. */
function reportReadiness(options: ResolvedAgentHttpHandlerOptions, ready: boolean, checks: Record<string, string>, failure: unknown): void {
  const state = options.readiness.state;
  if (state.wasReady === ready) return;
  const isFirstAnswer = state.wasReady === undefined;
  state.wasReady = ready;
  if (ready && isFirstAnswer) return;
  const logger = options.logger;
  if (ready) {
    if (logger === undefined) console.error("perdure http: ready again");
    else logger.info({ checks }, "ready again");
    return;
  }
  if (logger === undefined) console.error("perdure http: not ready:", checks, failure ?? "");
  else logger.error({ checks, ...(failure === undefined ? {} : { err: failure }) }, "not ready");
}

export const healthRoutes: readonly AgentHttpRoute[] = [
  {
    method: "GET", path: "/healthz", action: "getLiveness", isPublic: true,
    handle: () => new Response("ok\n", { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } }),
  },
  {
    method: "GET", path: "/readyz", action: "getReadiness", isPublic: true,
    handle: async ({ options }) => {
      const { checks, failure } = await readinessChecks(options);
      const ready = Object.values(checks).every((check) => check === "ok");
      reportReadiness(options, ready, checks, failure);
      return Response.json({ ready, checks }, { status: ready ? 200 : 503, headers: { "cache-control": "no-store" } });
    },
  },
];
