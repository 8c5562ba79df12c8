import { existsSync, readFileSync } from "node:fs";
import { extname, join, normalize } from "node:path";
import type { AgentSessionFlow } from "@perdure/agents";
import {
  agentResumeTokenHeaderName,
  createAgentEventSseResponse,
  createAgentUIMessageStreamResponse,
  readAgentSessionUIMessages,
  readAgentToolApprovalResponses,
  resolveAgentToolApprovalsWithUIMessageStream,
  sendAgentUserMessageWithUIMessageStream,
} from "@perdure/agents/ui-stream";
import { FlowNotFoundError, InvalidInputError, PerdureError, type Client } from "@perdure/engine";
import { Hono, type Context } from "hono";
import { inspectSession } from "./session-inspection.ts";

/** What a route does to a session, for the authorization hook. */
export type SessionAccess = "read" | "write" | "create" | "list";

/**
 * Decides whether a request may do `access` on a session. Throw or return
 * false to refuse (403). The application supplies it; the dev server allows
 * loopback callers only.
 */
export type AuthorizeRequest = (request: Request, access: SessionAccess, sessionId: string | null, remoteAddress: string | undefined) => boolean | Promise<boolean>;

/** Options of {@link createDevApp}. */
export interface DevAppOptions {
  client: Client;
  /** Agent session Flows by Flow type; the first is the default for new sessions. */
  flows: ReadonlyMap<string, AgentSessionFlow>;
  authorize: AuthorizeRequest;
  /** Folder of the built web UI; absent means API only. */
  webRoot?: string;
}

const sessionIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

function checkSessionId(value: unknown): string {
  if (typeof value !== "string" || !sessionIdPattern.test(value)) {
    throw new InvalidInputError(`session ID ${JSON.stringify(value)} is invalid: use 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit`);
  }
  return value;
}

async function readJsonBody(request: Request, limitBytes: number): Promise<unknown> {
  const text = await request.text();
  if (Buffer.byteLength(text) > limitBytes) throw new InvalidInputError(`request body is over ${limitBytes} bytes`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidInputError("request body is not valid JSON");
  }
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};

/** The dev server's HTTP API and web UI, as a Hono app of Fetch handlers. */
export function createDevApp(options: DevAppOptions): Hono {
  const { client, flows } = options;
  const app = new Hono();
  const defaultFlow = [...flows.values()][0];

  const remoteAddressOf = (context: Context): string | undefined =>
    (context.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;

  async function guard(context: Context, access: SessionAccess, sessionId: string | null): Promise<void> {
    let allowed: boolean;
    try {
      allowed = await options.authorize(context.req.raw, access, sessionId, remoteAddressOf(context));
    } catch {
      allowed = false;
    }
    if (!allowed) throw new ForbiddenError(`not allowed to ${access} ${sessionId ?? "sessions"}`);
  }

  async function flowOf(sessionId: string): Promise<AgentSessionFlow> {
    const description = await client.describe(sessionId);
    const flow = flows.get(description.flowType);
    if (flow === undefined) throw new FlowNotFoundError(`session ${sessionId} is a ${description.flowType}, which this server does not host`);
    return flow;
  }

  app.onError((error, context) => {
    if (error instanceof ForbiddenError) return context.json({ error: error.message }, 403);
    if (FlowNotFoundError.isInstance(error)) return context.json({ error: error.message }, 404);
    if (PerdureError.isInstance(error) && (error.code === "invalid_input" || error.code === "invalid_resume_token")) return context.json({ error: error.message }, 400);
    console.error("perdure dev:", error);
    return context.json({ error: "internal error; see the server log" }, 500);
  });

  app.get("/api/health", (context) => context.json({ ok: true }));

  app.get("/api/agents", async (context) => {
    await guard(context, "list", null);
    return context.json({ agents: [...flows.keys()] });
  });

  app.get("/api/sessions", async (context) => {
    await guard(context, "list", null);
    const sessions = [];
    for (const flowType of flows.keys()) {
      const listed = await client.listFlows({ flowType, limit: 500 });
      for (const entry of listed) {
        const flow = flows.get(entry.flowType);
        const [state] = flow === undefined ? [undefined] : await client.getAttributes(entry.flowId, flow.agentState);
        sessions.push({
          sessionId: entry.flowId,
          agent: entry.flowType,
          status: entry.status,
          createdAt: entry.createdAt.toISOString(),
          updatedAt: entry.updatedAt.toISOString(),
          agentStatus: state?.status ?? null,
          turnCount: state?.turnCount ?? 0,
          activeTurnId: state?.activeTurnId ?? null,
          lastTurnError: state?.lastTurnError ?? null,
        });
      }
    }
    sessions.sort((left, right) => right.updatedAt.localeCompare(left.updatedAt));
    return context.json({ sessions });
  });

  app.post("/api/sessions", async (context) => {
    const body = (await readJsonBody(context.req.raw, 64 * 1024)) as { agent?: unknown; sessionId?: unknown } | null;
    const agent = body?.agent ?? defaultFlow?.flowType;
    const flow = typeof agent === "string" ? flows.get(agent) : undefined;
    if (flow === undefined) throw new InvalidInputError(`agent ${JSON.stringify(agent)} is not one of ${[...flows.keys()].join(", ")}`);
    const sessionId = body?.sessionId === undefined ? `session-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}` : checkSessionId(body.sessionId);
    await guard(context, "create", sessionId);
    await client.start(flow, sessionId, {});
    return context.json({ sessionId, agent: flow.flowType }, 201);
  });

  app.get("/api/chat/:id", async (context) => {
    const sessionId = checkSessionId(context.req.param("id"));
    await guard(context, "read", sessionId);
    return context.json(await readAgentSessionUIMessages({ client, flow: await flowOf(sessionId), flowId: sessionId }));
  });

  app.post("/api/chat", async (context) => {
    const body = (await readJsonBody(context.req.raw, 1024 * 1024)) as { id?: unknown; messages?: unknown } | null;
    const sessionId = checkSessionId(body?.id);
    await guard(context, "write", sessionId);
    const flow = await flowOf(sessionId);
    const messages = Array.isArray(body?.messages) ? (body.messages as { role?: string; parts?: { type?: string; text?: string }[] }[]) : [];
    const lastMessage = messages.at(-1);
    const signal = context.req.raw.signal;
    if (lastMessage?.role === "assistant") {
      return resolveAgentToolApprovalsWithUIMessageStream({
        client, flow, flowId: sessionId, approvals: readAgentToolApprovalResponses(lastMessage as never), signal,
      });
    }
    const text = (lastMessage?.parts ?? []).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("");
    return sendAgentUserMessageWithUIMessageStream({ client, flow, flowId: sessionId, text, signal });
  });

  app.get("/api/chat/:id/stream", async (context) => {
    const sessionId = checkSessionId(context.req.param("id"));
    await guard(context, "read", sessionId);
    const resumeToken = context.req.header(agentResumeTokenHeaderName);
    return createAgentUIMessageStreamResponse({
      client, flow: await flowOf(sessionId), flowId: sessionId, signal: context.req.raw.signal, ...(resumeToken === undefined ? {} : { resumeToken }),
    });
  });

  app.get("/api/sessions/:id/inspect", async (context) => {
    const sessionId = checkSessionId(context.req.param("id"));
    await guard(context, "read", sessionId);
    return context.json(await inspectSession(client, await flowOf(sessionId), sessionId));
  });

  app.get("/api/sessions/:id/events", async (context) => {
    const sessionId = checkSessionId(context.req.param("id"));
    await guard(context, "read", sessionId);
    const resumeToken = context.req.header("last-event-id") ?? context.req.query("resumeToken") ?? "";
    return createAgentEventSseResponse({ client, flow: await flowOf(sessionId), flowId: sessionId, resumeToken, signal: context.req.raw.signal });
  });

  app.post("/api/sessions/:id/stop", async (context) => {
    const sessionId = checkSessionId(context.req.param("id"));
    await guard(context, "write", sessionId);
    await flowOf(sessionId);
    await client.stop(sessionId, "stopped from the dev server");
    return context.json({ stopped: true });
  });

  if (options.webRoot !== undefined) {
    const webRoot = options.webRoot;
    app.get("*", (context) => {
      const requested = normalize(decodeURIComponent(new URL(context.req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
      let file = join(webRoot, requested);
      if (!file.startsWith(webRoot) || !existsSync(file) || requested === "/" || extname(file) === "") file = join(webRoot, "index.html");
      if (!existsSync(file)) return context.text("the web UI is not built; run npm run build:web", 404);
      return new Response(readFileSync(file), { headers: { "content-type": contentTypes[extname(file)] ?? "application/octet-stream" } });
    });
  }
  return app;
}

/** Refused by the authorization hook. */
class ForbiddenError extends Error {}

/** The dev server's authorization: loopback callers only. */
export function allowLoopbackOnly(_request: Request, _access: SessionAccess, _sessionId: string | null, remoteAddress: string | undefined): boolean {
  return remoteAddress === "127.0.0.1" || remoteAddress === "::1" || remoteAddress === "::ffff:127.0.0.1";
}
